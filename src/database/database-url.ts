export interface DatabaseLocation {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export function parseDatabaseUrl(url: string): DatabaseLocation {
  const parsed = new URL(url);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]{1,64}$/.test(database)) {
    throw new Error(
      `DATABASE_URL: the database name must be 1-64 characters of [A-Za-z0-9_] (got "${database}")`,
    );
  }
  return {
    host: parsed.hostname || '127.0.0.1',
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username || 'root'),
    password: decodeURIComponent(parsed.password),
    database,
  };
}
