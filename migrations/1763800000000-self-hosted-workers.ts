import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Self-hosted workers: runs remember the worker host they must run on (NULL = Ambient's own
 * workers) and since when they wait for a claim; API keys can be bound to one execution of one
 * run (the run-scoped keys a self-hosted execution reports with). Works on MySQL 8 and MariaDB 10.6+.
 */
export class SelfHostedWorkers1763800000000 implements MigrationInterface {
  name = 'SelfHostedWorkers1763800000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`ALTER TABLE runs
      ADD COLUMN worker_host ${id(128)} NULL,
      ADD COLUMN unclaimed_since DATETIME(3) NULL,
      ADD KEY idx_runs_worker_host (team_id, worker_host, state, created_at, id),
      ADD KEY idx_runs_self_hosted_state (state, worker_host)`);
    await q.query(`ALTER TABLE api_keys
      ADD COLUMN run_id ${id(36)} NULL,
      ADD COLUMN run_execution_id INT NULL,
      ADD KEY idx_api_keys_live_run (revoked_at, run_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys
      DROP KEY idx_api_keys_live_run,
      DROP COLUMN run_execution_id,
      DROP COLUMN run_id`);
    await q.query(`ALTER TABLE runs
      DROP KEY idx_runs_self_hosted_state,
      DROP KEY idx_runs_worker_host,
      DROP COLUMN unclaimed_since,
      DROP COLUMN worker_host`);
  }
}
