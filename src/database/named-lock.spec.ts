import type { DataSource } from 'typeorm';
import { databaseLockName, whileNamedLockHeld } from './named-lock';

describe('databaseLockName', () => {
  it('names the purpose and the database, so two databases on one server never share a lock', () => {
    expect(databaseLockName('migrations', 'ambient')).toBe('ambient_migrations:ambient');
    expect(databaseLockName('migrations', 'a')).not.toBe(databaseLockName('migrations', 'b'));
  });

  it('stays within MySQL’s 64 characters for a long database name, and still tells them apart', () => {
    const long = 'x'.repeat(64);
    expect(databaseLockName('migrations', long).length).toBeLessThanOrEqual(64);
    expect(databaseLockName('migrations', long)).not.toBe(
      databaseLockName('migrations', `${long}y`),
    );
  });
});

describe('whileNamedLockHeld', () => {
  it('closes the connection instead of pooling it again when the lock could not be released', async () => {
    const destroy = jest.fn();
    const release = jest.fn().mockResolvedValue(undefined);
    const runner = {
      databaseConnection: { destroy },
      connect: jest.fn().mockResolvedValue(undefined),
      release,
      query: jest.fn((sql: string) =>
        sql.startsWith('SELECT GET_LOCK')
          ? Promise.resolve([{ locked: 1 }])
          : Promise.reject(new Error('Lost connection')),
      ),
    };
    const dataSource = { options: { database: 'ambient' }, createQueryRunner: () => runner };
    const outcome = await whileNamedLockHeld(dataSource as unknown as DataSource, 'spec', 0, () =>
      Promise.resolve('done'),
    );
    expect(outcome).toEqual({ locked: true, value: 'done' });
    expect(destroy).toHaveBeenCalledTimes(1);
    expect(release).toHaveBeenCalledTimes(1);
  });
});
