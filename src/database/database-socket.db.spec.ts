import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config';
import { useTestDatabase } from '../../test/support/unit/test-database';
import { dataSourceOptions, ensureDatabase } from './database-setup';

/** DATABASE_URL's `?socket=`: the database is created and used over the server's Unix socket. */
describe('DATABASE_URL with a socket (database)', () => {
  const db = useTestDatabase('db_socket');
  const name = `ambient_db_socket_${process.pid}`;
  let socket: string;

  beforeAll(async () => {
    [{ socket }] = (await db.dataSource.query('SELECT @@socket AS socket')) as { socket: string }[];
  });

  it('connects through the socket, not host and port', async () => {
    // Port 1 answers nothing: only the socket can reach the server.
    const url = `mysql://root@127.0.0.1:1/${name}?socket=${encodeURIComponent(socket)}`;
    await ensureDatabase(url);
    const config = { database: { url, poolSize: 2 } } as unknown as AppConfig;
    const dataSource = new DataSource({ ...dataSourceOptions(config), migrations: [] });
    await dataSource.initialize();
    try {
      const [row] = (await dataSource.query(
        'SELECT DATABASE() AS name, HOST AS host FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()',
      )) as { name: string; host: string }[];
      expect(row).toEqual({ name, host: 'localhost' });
    } finally {
      await dataSource.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await dataSource.destroy();
    }
  });

  it('names the socket when it cannot connect', async () => {
    await expect(
      ensureDatabase(`mysql://root@127.0.0.1/${name}?socket=/nonexistent/mysqld.sock`),
    ).rejects.toThrow('DATABASE_URL: cannot connect to MySQL at /nonexistent/mysqld.sock as root');
  });
});
