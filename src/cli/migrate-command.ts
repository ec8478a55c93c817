import { prepareDatabase } from '../bootstrap/preflight';
import { parseDatabaseUrl } from '../database/database-url';
import { CliCommand } from './cli-command';

export const migrateCommand: CliCommand = {
  name: 'migrate',
  synopsis: 'migrate',
  summary: 'Create the database if it is missing and apply pending migrations (safe to repeat).',
  details: ['', 'Uses DATABASE_URL (or database.url in the config file).'],
  options: {},
  async run(_values, io) {
    const config = io.config();
    const applied = await prepareDatabase(config);
    const database = parseDatabaseUrl(config.database.url).database;
    for (const name of applied) io.out(`applied ${name}`);
    io.out(
      applied.length ? `database "${database}" migrated` : `database "${database}" is up to date`,
    );
  },
};
