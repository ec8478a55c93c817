import { cannotConnect, describeDatabaseServer, parseDatabaseUrl } from './database-url';

describe('parseDatabaseUrl', () => {
  it('reads host, port, user, password and database', () => {
    expect(parseDatabaseUrl('mysql://app:s%40cret@db.internal:3307/ambient')).toEqual({
      host: 'db.internal',
      port: 3307,
      user: 'app',
      password: 's@cret',
      database: 'ambient',
    });
  });

  it('takes the server socket from ?socket=, which messages then name', () => {
    const location = parseDatabaseUrl(
      'mysql://root@localhost/ambient?socket=/run/mysqld/mysqld.sock',
    );
    expect(location.socketPath).toBe('/run/mysqld/mysqld.sock');
    expect(describeDatabaseServer(location)).toBe('/run/mysqld/mysqld.sock');
    expect(cannotConnect(location, new Error('ENOENT')).message).toBe(
      'DATABASE_URL: cannot connect to MySQL at /run/mysqld/mysqld.sock as root (ENOENT)',
    );
  });

  it('refuses a relative socket path and a bad database name, naming the setting', () => {
    expect(() => parseDatabaseUrl('mysql://root@localhost/ambient?socket=mysqld.sock')).toThrow(
      'DATABASE_URL: the socket parameter must be an absolute path (got "mysqld.sock")',
    );
    expect(() => parseDatabaseUrl('mysql://root@localhost/am-bient')).toThrow(
      'DATABASE_URL: the database name must be 1-64 characters',
    );
  });
});
