import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Follow-ups that never reached an execution because their run was cancelled: `dropped_at` marks
 * them as not delivered (they are never taken by a later execution). Works on MySQL 8 and MariaDB 10.6+.
 */
export class FollowupsDropped1763895000000 implements MigrationInterface {
  name = 'FollowupsDropped1763895000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE run_followups ADD COLUMN dropped_at DATETIME(3) NULL AFTER consumed_at`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE run_followups DROP COLUMN dropped_at`);
  }
}
