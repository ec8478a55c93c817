import { existsSync } from 'node:fs';

/**
 * The MySQL socket the benches' Ambient connects through (DATABASE_URL `?socket=`), as a
 * deployment with the database on the same host may: BENCH_DB_SOCKET (e.g.
 * /run/mysqld/mysqld.sock) when it exists; loopback TCP otherwise, as the figures before it.
 */
export function benchDatabaseSocket(): string | undefined {
  const chosen = process.env.BENCH_DB_SOCKET;
  return chosen && existsSync(chosen) ? chosen : undefined;
}

/** How the bench reached MySQL, for its settings line. */
export function describeBenchDatabase(socket: string | undefined): string {
  return socket ? `MySQL over its Unix socket (${socket})` : 'MySQL over loopback TCP';
}
