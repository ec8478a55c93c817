import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Public artifacts, judge runs and their scores. Transcripts and artifact files live in the blob
 * store, not here. Works on MySQL 8 and MariaDB 10.6+.
 */
export class ConversationsArtifactsScores1763830000000 implements MigrationInterface {
  name = 'ConversationsArtifactsScores1763830000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    const table = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';

    await q.query(
      `ALTER TABLE run_artifacts ADD COLUMN is_public TINYINT(1) NOT NULL DEFAULT 0 AFTER data`,
    );

    await q.query(`CREATE TABLE run_judges (
      judge_run_id ${id(36)} NOT NULL PRIMARY KEY,
      target_run_id ${id(36)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      created_at DATETIME(3) NOT NULL,
      KEY ix_run_judges_target (target_run_id),
      CONSTRAINT fk_run_judges_judge FOREIGN KEY (judge_run_id) REFERENCES runs (id) ON DELETE CASCADE,
      CONSTRAINT fk_run_judges_target FOREIGN KEY (target_run_id) REFERENCES runs (id) ON DELETE CASCADE
    ) ${table}`);

    await q.query(`CREATE TABLE run_scores (
      id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
      target_run_id ${id(36)} NOT NULL,
      judge_run_id ${id(36)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      criterion VARCHAR(100) NOT NULL,
      classification VARCHAR(100) NULL,
      score DOUBLE NULL,
      reason TEXT NULL,
      created_at DATETIME(3) NOT NULL,
      KEY ix_run_scores_target (target_run_id, id),
      CONSTRAINT fk_run_scores_target FOREIGN KEY (target_run_id) REFERENCES runs (id) ON DELETE CASCADE,
      CONSTRAINT fk_run_scores_judge FOREIGN KEY (judge_run_id) REFERENCES runs (id) ON DELETE CASCADE
    ) ${table}`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE run_scores');
    await q.query('DROP TABLE run_judges');
    await q.query('ALTER TABLE run_artifacts DROP COLUMN is_public');
  }
}
