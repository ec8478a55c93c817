import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Which workspace volume (`AMBIENT_WORKSPACE_VOLUME`) holds a run's kept workspace, so only the
 * workers that can reach that disk sweep it. Works on MySQL 8 and MariaDB 10.6+.
 */
export class WorkspaceVolumes1763860000000 implements MigrationInterface {
  name = 'WorkspaceVolumes1763860000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs
      ADD COLUMN workspace_volume VARCHAR(128) NULL AFTER workspace_retained_until,
      ADD KEY idx_runs_workspace_volume (workspace_volume, workspace_retained_until)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs
      DROP KEY idx_runs_workspace_volume,
      DROP COLUMN workspace_volume`);
  }
}
