import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scheduled agents (with one row per fired tick, the exactly-once ledger) and agent identities
 * (service-account users with their agent settings, soft-deleted; a per-team agent limit).
 * Works on MySQL 8 and MariaDB 10.6+.
 */
export class SchedulesIdentities1763790000000 implements MigrationInterface {
  name = 'SchedulesIdentities1763790000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`ALTER TABLE teams ADD COLUMN agent_limit INT NULL`);
    await q.query(`ALTER TABLE users ADD COLUMN deleted_at DATETIME(3) NULL`);

    await q.query(`CREATE TABLE agent_identities (
      user_id ${id(22)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      name VARCHAR(255) NOT NULL,
      factory_uid VARCHAR(64) NULL,
      settings JSON NOT NULL,
      created_by ${id(22)} NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      deleted_at DATETIME(3) NULL,
      KEY idx_agent_identities_team (team_id, deleted_at, created_at, user_id),
      CONSTRAINT fk_agent_identities_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
      CONSTRAINT fk_agent_identities_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE schedules (
      id ${id(36)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      name VARCHAR(255) NOT NULL,
      cron_schedule VARCHAR(128) NOT NULL,
      enabled TINYINT(1) NOT NULL,
      prompt MEDIUMTEXT NOT NULL,
      agent_config JSON NULL,
      agent_uid ${id(22)} NULL,
      metadata JSON NULL,
      mode VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'normal',
      created_by ${id(22)} NULL,
      updated_by ${id(22)} NULL,
      next_run_at DATETIME(3) NULL,
      last_ran_at DATETIME(3) NULL,
      last_spawn_error TEXT NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      KEY idx_schedules_team_name (team_id, name, id),
      KEY idx_schedules_due (enabled, next_run_at),
      CONSTRAINT fk_schedules_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE schedule_firings (
      id ${id(36)} NOT NULL PRIMARY KEY,
      schedule_id ${id(36)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      scheduled_for DATETIME(3) NOT NULL,
      status VARCHAR(16) CHARACTER SET ascii NOT NULL,
      run_id ${id(36)} NULL,
      schedule_name VARCHAR(255) NOT NULL,
      cron_schedule VARCHAR(128) NOT NULL,
      missed_ticks INT NOT NULL DEFAULT 0,
      note TEXT NULL,
      claimed_at DATETIME(3) NOT NULL,
      finished_at DATETIME(3) NULL,
      UNIQUE KEY uq_schedule_firings_tick (schedule_id, scheduled_for),
      KEY idx_schedule_firings_status (status, claimed_at),
      CONSTRAINT fk_schedule_firings_schedule FOREIGN KEY (schedule_id) REFERENCES schedules (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS schedule_firings`);
    await q.query(`DROP TABLE IF EXISTS schedules`);
    await q.query(`DROP TABLE IF EXISTS agent_identities`);
    await q.query(`ALTER TABLE users DROP COLUMN deleted_at`);
    await q.query(`ALTER TABLE teams DROP COLUMN agent_limit`);
  }
}
