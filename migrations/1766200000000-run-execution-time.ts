import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run's `run_time` is the time its executions ran, not the span from its first start to its
 * last end (which counted the idle time before a follow-up, or while BLOCKED on a person):
 * `run_time_ms` sums the ended executions, `execution_started_at` is the running one's start.
 * Runs of before keep their first-start-to-end span, the best that is known of them.
 */
export class RunExecutionTime1766200000000 implements MigrationInterface {
  name = 'RunExecutionTime1766200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE runs
         ADD COLUMN run_time_ms BIGINT NOT NULL DEFAULT 0 AFTER attempt,
         ADD COLUMN execution_started_at DATETIME(3) NULL AFTER run_time_ms`,
    );
    await q.query(
      `UPDATE runs
          SET run_time_ms = GREATEST(0,
                TIMESTAMPDIFF(MICROSECOND, started_at, COALESCE(finished_at, updated_at)) DIV 1000)
        WHERE started_at IS NOT NULL
          AND state IN ('SUCCEEDED', 'FAILED', 'ERROR', 'BLOCKED', 'CANCELLED')`,
    );
    await q.query(
      `UPDATE runs SET execution_started_at = COALESCE(started_at, updated_at)
        WHERE state IN ('CLAIMED', 'INPROGRESS')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN execution_started_at, DROP COLUMN run_time_ms`);
  }
}
