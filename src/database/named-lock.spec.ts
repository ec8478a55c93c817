import { databaseLockName } from './named-lock';

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
