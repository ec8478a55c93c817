import { existsSync } from 'node:fs';

const DEFAULT_SOCKET = '/run/mysqld/mysqld.sock';

/**
 * The MySQL socket the benches' Ambient connects through (DATABASE_URL `?socket=`), as a
 * deployment with the database on the same host would: BENCH_DB_SOCKET, else MariaDB's Debian
 * default when it exists; BENCH_DB_SOCKET= (empty) measures loopback TCP instead.
 */
export function benchDatabaseSocket(): string | undefined {
  const chosen = process.env.BENCH_DB_SOCKET ?? DEFAULT_SOCKET;
  return chosen && existsSync(chosen) ? chosen : undefined;
}

/** How the bench reached MySQL, for its settings line. */
export function describeBenchDatabase(socket: string | undefined): string {
  return socket ? `MySQL over its Unix socket (${socket})` : 'MySQL over loopback TCP';
}
