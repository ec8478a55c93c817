import type { AppConfig } from '../config/app-config';
import type { CliServices } from './cli-database';

export type { CliServices } from './cli-database';

/**
 * Runs `fn` with the team services on a DataSource of their own (cli-database.ts). Loaded on
 * first use, so commands that only call the API start without loading TypeORM.
 */
export async function withServices<T>(
  config: AppConfig,
  fn: (services: CliServices) => Promise<T>,
): Promise<T> {
  const database = await import('./cli-database');
  return database.withServices(config, fn);
}
