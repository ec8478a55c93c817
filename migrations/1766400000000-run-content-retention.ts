import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The content retention (AMBIENT_RUN_CONTENT_RETENTION_DAYS, off unless set): `runs.content_deleted_at`
 * marks a run whose timeline, conversation, follow-ups, attachments and stored artifacts were
 * deleted, indexed with `finished_at` so a sweep finds the runs that ended before its cut-off
 * without reading the ones already done; `pending_blob_deletions` holds the blob keys those rows
 * named until the blob store deleted them (a crash in between leaves them to the next sweep).
 * Ended runs without an end time (none should exist) get their last update's as theirs, since
 * the retention counts from it.
 */
export class RunContentRetention1766400000000 implements MigrationInterface {
  name = 'RunContentRetention1766400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE `pending_blob_deletions` (`blob_key` varchar(255) CHARACTER SET "ascii" COLLATE "ascii_bin" NOT NULL, `created_at` datetime(3) NOT NULL, INDEX `idx_pending_blob_deletions_created` (`created_at`), PRIMARY KEY (`blob_key`)) ENGINE=InnoDB',
    );
    // Two statements: a column added alone is instant; the index is built online beside it.
    await q.query('ALTER TABLE `runs` ADD `content_deleted_at` datetime(3) NULL');
    await q.query(
      'CREATE INDEX `idx_runs_content_retention` ON `runs` (`content_deleted_at`, `finished_at`)',
    );
    // Through the new index: only the runs without an end time are read.
    await q.query(
      'UPDATE `runs` SET `finished_at` = `updated_at` ' +
        'WHERE `content_deleted_at` IS NULL AND `finished_at` IS NULL ' +
        "AND `state` IN ('SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED')",
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX `idx_runs_content_retention` ON `runs`');
    await q.query('ALTER TABLE `runs` DROP COLUMN `content_deleted_at`');
    await q.query('DROP TABLE `pending_blob_deletions`');
  }
}
