import { isAbsolute } from 'node:path';

export interface DatabaseLocation {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /**
   * The server's Unix socket (`?socket=/run/mysqld/mysqld.sock`): used instead of host and port.
   * On the same host it spares every statement loopback TCP's cost on both sides.
   */
  socketPath?: string;
}

export function parseDatabaseUrl(url: string): DatabaseLocation {
  const parsed = new URL(url);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]{1,64}$/.test(database)) {
    throw new Error(
      `DATABASE_URL: the database name must be 1-64 characters of [A-Za-z0-9_] (got "${database}")`,
    );
  }
  const socketPath = parsed.searchParams.get('socket') ?? undefined;
  if (socketPath !== undefined && !isAbsolute(socketPath)) {
    throw new Error(
      `DATABASE_URL: the socket parameter must be an absolute path (got "${socketPath}")`,
    );
  }
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username || 'root'),
    password: decodeURIComponent(parsed.password),
    database,
    ...(socketPath ? { socketPath } : {}),
  };
}

/** Where the server is, for messages: its socket, else host:port. */
export function describeDatabaseServer(location: DatabaseLocation): string {
  return location.socketPath ?? `${location.host}:${location.port}`;
}

/** The error of a failed connection, naming the setting, the server and the user. */
export function cannotConnect(location: DatabaseLocation, err: unknown): Error {
  return new Error(
    `DATABASE_URL: cannot connect to MySQL at ${describeDatabaseServer(location)} as ${location.user} (${(err as Error).message})`,
  );
}
