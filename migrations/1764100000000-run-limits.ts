import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Limits of a team (`agent_uid = ''`) or of one of its agent identities: concurrent runs, a
 * monthly budget and a per-run cost cap (NULL = no limit). Claims lock these rows to take a slot.
 * A run that could not start for want of a slot is marked `at_capacity` until it is claimed; a run
 * may ask for a lower cost cap of its own (`max_cost_usd`).
 */
export class RunLimits1764100000000 implements MigrationInterface {
  name = 'RunLimits1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE run_limits (
      team_id VARCHAR(22) NOT NULL,
      agent_uid VARCHAR(22) NOT NULL DEFAULT '',
      max_concurrent_runs INT NULL,
      monthly_budget_usd DECIMAL(18,6) NULL,
      max_run_cost_usd DECIMAL(18,6) NULL,
      updated_at DATETIME(3) NOT NULL,
      PRIMARY KEY (team_id, agent_uid)
    ) ENGINE=InnoDB`);
    await q.query(`ALTER TABLE runs ADD COLUMN at_capacity TINYINT(1) NOT NULL DEFAULT 0,
      ADD COLUMN max_cost_usd DECIMAL(18,6) NULL,
      ADD KEY idx_runs_waiting (at_capacity, state, team_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE runs DROP KEY idx_runs_waiting, DROP COLUMN max_cost_usd, DROP COLUMN at_capacity`,
    );
    await q.query(`DROP TABLE run_limits`);
  }
}
