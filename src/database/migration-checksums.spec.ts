import { MIGRATIONS } from '../../migrations';
import {
  checksumOf,
  MIGRATION_FILE,
  migrationFiles,
  recordedChecksums,
} from '../../scripts/migration-checksums';

/**
 * Migrations are never edited once landed: a database that already ran one never runs it again,
 * so an edit reaches new databases only and the two drift apart. Each file is held to the
 * checksum recorded when it was added (migrations/checksums.json).
 */
describe('migration checksums', () => {
  const recorded = recordedChecksums();
  const files = migrationFiles();

  it('finds every landed migration unchanged', () => {
    const changed = Object.entries(recorded)
      .filter(([file, checksum]) => !files.includes(file) || checksumOf(file) !== checksum)
      .map(([file]) => (files.includes(file) ? `${file} was edited` : `${file} was removed`));
    if (changed.length) {
      throw new Error(
        `${changed.join('; ')}. A landed migration is never edited, renamed or removed: databases that ran it ` +
          'never run it again. Restore it (git checkout main -- migrations/<file>) and make the change in a new ' +
          'migration (npm run migration:generate). Only a migration that has not landed on main yet may change: ' +
          'then delete its line from migrations/checksums.json and run npm run migration:checksums.',
      );
    }
    expect(changed).toEqual([]);
  });

  it('has a checksum for every migration', () => {
    const missing = files.filter((file) => !(file in recorded));
    if (missing.length) {
      throw new Error(
        `no checksum recorded for ${missing.join(', ')}: once the migration is final, run npm run migration:checksums and commit migrations/checksums.json with it`,
      );
    }
    expect(missing).toEqual([]);
  });

  it('runs every migration file: each is listed in migrations/index.ts', () => {
    const listed = MIGRATIONS.map((migration) => migration.name);
    const unlisted = files.filter((file) => {
      const timestamp = MIGRATION_FILE.exec(file)![1];
      return !listed.some((name) => name.endsWith(timestamp));
    });
    expect(unlisted).toEqual([]);
  });
});
