import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Two indexes of `runs` that every run's INSERT (and every UPDATE of their columns) paid for and
 * no query needed: `idx_runs_parent`, read by nothing (a run's parent is read from its own row;
 * the ancestor filter goes through `run_ancestors`), and `idx_runs_workspace_retained`, whose one
 * query (the kept workspaces' sweep: due, on this volume or none) `idx_runs_workspace_volume`
 * (workspace_volume, workspace_retained_until) serves whole. Dropping an index is in place and
 * brief; the run list, which names the indexes it may use, reloads their names when one is gone.
 */
export class RunsUnusedIndexes1766500000000 implements MigrationInterface {
  name = 'RunsUnusedIndexes1766500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX `idx_runs_parent` ON `runs`');
    await q.query('DROP INDEX `idx_runs_workspace_retained` ON `runs`');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE INDEX `idx_runs_workspace_retained` ON `runs` (`workspace_retained_until`)',
    );
    await q.query('CREATE INDEX `idx_runs_parent` ON `runs` (`parent_run_id`)');
  }
}
