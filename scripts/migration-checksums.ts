// The checksums of the landed migrations (migrations/checksums.json): a migration is never edited
// once it landed, since databases that already ran it would never see the change
// (src/database/migration-checksums.spec.ts holds every file to its checksum).
//   npm run migration:checksums   records the checksum of each migration that has none yet
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const MIGRATIONS_DIR = resolve(__dirname, '../migrations');
export const CHECKSUMS_FILE = join(MIGRATIONS_DIR, 'checksums.json');

/** A migration's file name: `<13-digit timestamp>-<kebab-case name>.ts`. */
export const MIGRATION_FILE = /^(\d{13})-[a-z0-9-]+\.ts$/;

/** Every migration file in migrations/, oldest first. */
export function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => MIGRATION_FILE.test(name))
    .sort();
}

/** SHA-256 of a migration's text (line endings as LF, so a Windows checkout hashes the same). */
export function checksumOf(file: string): string {
  const text = readFileSync(join(MIGRATIONS_DIR, file), 'utf8').replace(/\r\n/g, '\n');
  return createHash('sha256').update(text).digest('hex');
}

/** The recorded checksums, by file name. */
export function recordedChecksums(): Record<string, string> {
  return JSON.parse(readFileSync(CHECKSUMS_FILE, 'utf8')) as Record<string, string>;
}

/** Adds the checksum of every migration without one; never changes a recorded one. */
export function recordNewChecksums(): string[] {
  const recorded = recordedChecksums();
  const added = migrationFiles().filter((file) => !(file in recorded));
  const all = { ...recorded };
  for (const file of added) all[file] = checksumOf(file);
  const sorted = Object.fromEntries(Object.entries(all).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(CHECKSUMS_FILE, `${JSON.stringify(sorted, null, 2)}\n`);
  return added;
}

if (require.main === module) {
  const added = recordNewChecksums();
  for (const file of added) console.log(`recorded ${file}`);
  console.log(
    added.length
      ? `${added.length} checksum(s) added to migrations/checksums.json: commit it with the migration`
      : 'every migration already has its checksum',
  );
}
