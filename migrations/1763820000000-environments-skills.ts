import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Environments (repositories + setup commands a run's workspace is prepared from), their guest
 * grants to other teams, and the debug window of a run whose setup failed (its workspace is kept
 * until `workspace_retained_until`). Works on MySQL 8 and MariaDB 10.6+.
 */
export class EnvironmentsSkills1763820000000 implements MigrationInterface {
  name = 'EnvironmentsSkills1763820000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`CREATE TABLE environments (
      id ${id(22)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      name VARCHAR(255) NOT NULL,
      config JSON NOT NULL,
      setup_failed TINYINT(1) NOT NULL DEFAULT 0,
      share_token ${id(43)} NULL,
      creator_id ${id(22)} NULL,
      last_editor_id ${id(22)} NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      PRIMARY KEY (id),
      UNIQUE KEY uq_environments_share_token (share_token),
      KEY idx_environments_team (team_id, updated_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
    await q.query(`CREATE TABLE environment_grants (
      environment_id ${id(22)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      created_at DATETIME(3) NOT NULL,
      PRIMARY KEY (environment_id, team_id),
      KEY idx_environment_grants_team (team_id)
    ) ENGINE=InnoDB`);
    await q.query(`ALTER TABLE runs
      ADD COLUMN workspace_retained_until DATETIME(3) NULL,
      ADD KEY idx_runs_workspace_retained (workspace_retained_until)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs
      DROP KEY idx_runs_workspace_retained,
      DROP COLUMN workspace_retained_until`);
    await q.query('DROP TABLE environment_grants');
    await q.query('DROP TABLE environments');
  }
}
