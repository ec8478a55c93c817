import { parseDatabaseUrl } from '../database/database-url';
import { CliCommand } from './cli-command';
import { CommandError } from './cli-errors';

export const migrateCommand: CliCommand = {
  name: 'migrate',
  synopsis: 'migrate [--check]',
  summary: 'Create the database if it is missing and apply pending migrations (safe to repeat).',
  details: [
    '',
    'Uses DATABASE_URL (or database.url in the config file).',
    '',
    'Options:',
    '  --check   apply nothing: exit 0 when the schema is current, 1 when migrations are pending',
    '            (an init container that waits for a separate migration step)',
  ],
  options: { check: { type: 'boolean' } },
  async run(values, io) {
    const config = io.config();
    // Loaded here, not at start: the other commands need no migrations, TypeORM or S3 client.
    const [{ prepareDatabase }, { hasPendingMigrations }] = await Promise.all([
      import('../bootstrap/preflight'),
      import('../database/database-setup'),
    ]);
    const database = parseDatabaseUrl(config.database.url).database;
    if (values.check) {
      if (await hasPendingMigrations(config)) {
        throw new CommandError(`database "${database}" has pending migrations; run "migrate"`);
      }
      io.out(`database "${database}" is up to date`);
      return;
    }
    const applied = await prepareDatabase(config);
    for (const name of applied) io.out(`applied ${name}`);
    io.out(
      applied.length ? `database "${database}" migrated` : `database "${database}" is up to date`,
    );
  },
};
