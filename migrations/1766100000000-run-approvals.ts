import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A person in the loop: a run's requests for approval (a tool call an approval rule asks about)
 * and its questions (`ask_user`). A request is written with the run's move to BLOCKED; a decision
 * (approve, deny, or an answer) queues the run again, and the execution that resumes it takes the
 * decision once (`taken_by_execution`), so an approved call runs at most once.
 */
export class RunApprovals1766100000000 implements MigrationInterface {
  name = 'RunApprovals1766100000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`CREATE TABLE run_approvals (
      id ${id(36)} NOT NULL PRIMARY KEY,
      run_id ${id(36)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      execution_id INT NOT NULL,
      kind VARCHAR(16) CHARACTER SET ascii NOT NULL,
      tool VARCHAR(255) NOT NULL,
      tool_call_id VARCHAR(255) NULL,
      arguments JSON NOT NULL,
      rule JSON NULL,
      summary VARCHAR(1000) NOT NULL,
      requested_at DATETIME(3) NOT NULL,
      decision VARCHAR(16) CHARACTER SET ascii NULL,
      comment MEDIUMTEXT NULL,
      decided_by JSON NULL,
      decided_at DATETIME(3) NULL,
      taken_by_execution INT NULL,
      KEY idx_run_approvals_run (run_id, requested_at),
      KEY idx_run_approvals_team_pending (team_id, decision, requested_at),
      CONSTRAINT fk_run_approvals_run FOREIGN KEY (run_id) REFERENCES runs (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE run_approvals`);
  }
}
