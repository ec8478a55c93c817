import { useTestDatabase } from '../../test/support/unit/test-database';
import { databaseLockName, whileNamedLockHeld } from './named-lock';

/** whileNamedLockHeld on a real server: one holder at a time, and the lock freed however work ends. */
describe('whileNamedLockHeld (database)', () => {
  const db = useTestDatabase('named_lock');
  const lockName = () => databaseLockName('spec', String(db.dataSource.options.database));
  const isFree = async () => {
    const [row] = (await db.dataSource.query('SELECT IS_FREE_LOCK(?) AS free', [lockName()])) as {
      free: number | string;
    }[];
    return Number(row.free) === 1;
  };

  it('runs the work holding the lock and frees it afterwards', async () => {
    const outcome = await whileNamedLockHeld(db.dataSource, 'spec', 0, async () => {
      expect(await isFree()).toBe(false);
      return 'done';
    });
    expect(outcome).toEqual({ locked: true, value: 'done' });
    expect(await isFree()).toBe(true);
  });

  it('does not run the work while another connection holds the lock', async () => {
    const holder = db.dataSource.createQueryRunner();
    await holder.connect();
    try {
      await holder.query('SELECT GET_LOCK(?, 0)', [lockName()]);
      const work = jest.fn().mockResolvedValue('done');
      expect(await whileNamedLockHeld(db.dataSource, 'spec', 0, work)).toEqual({ locked: false });
      expect(work).not.toHaveBeenCalled();
    } finally {
      await holder.query('SELECT RELEASE_LOCK(?)', [lockName()]);
      await holder.release();
    }
  });

  it('frees the lock when the work fails', async () => {
    await expect(
      whileNamedLockHeld(db.dataSource, 'spec', 0, () => Promise.reject(new Error('boom'))),
    ).rejects.toThrow('boom');
    expect(await isFree()).toBe(true);
  });
});
