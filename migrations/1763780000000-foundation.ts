import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Teams, users and API keys; runs with their timeline, follow-ups, attachments, metadata,
 * ancestry, artifacts and stored model messages. Works on MySQL 8 and MariaDB 10.6+.
 * Identifiers are ASCII with binary collation (case-sensitive, compact indexes); text is utf8mb4.
 */
export class Foundation1763780000000 implements MigrationInterface {
  name = 'Foundation1763780000000';

  async up(q: QueryRunner): Promise<void> {
    const id = (n: number) => `VARCHAR(${n}) CHARACTER SET ascii COLLATE ascii_bin`;
    await q.query(`CREATE TABLE teams (
      id ${id(22)} NOT NULL PRIMARY KEY,
      name VARCHAR(128) NOT NULL,
      created_at DATETIME(3) NOT NULL,
      UNIQUE KEY uq_teams_name (name)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE users (
      id ${id(22)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      display_name VARCHAR(255) NOT NULL,
      email VARCHAR(255) NULL,
      type VARCHAR(16) NOT NULL DEFAULT 'user',
      role VARCHAR(16) NOT NULL DEFAULT 'member',
      created_at DATETIME(3) NOT NULL,
      KEY idx_users_team (team_id),
      CONSTRAINT fk_users_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE api_keys (
      id ${id(22)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      user_id ${id(22)} NULL,
      name VARCHAR(128) NOT NULL,
      prefix ${id(16)} NOT NULL,
      secret_hash BINARY(32) NOT NULL,
      created_at DATETIME(3) NOT NULL,
      last_used_at DATETIME(3) NULL,
      revoked_at DATETIME(3) NULL,
      UNIQUE KEY uq_api_keys_prefix (prefix),
      KEY idx_api_keys_team (team_id),
      CONSTRAINT fk_api_keys_team FOREIGN KEY (team_id) REFERENCES teams (id) ON DELETE CASCADE,
      CONSTRAINT fk_api_keys_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE runs (
      id ${id(36)} NOT NULL PRIMARY KEY,
      team_id ${id(22)} NOT NULL,
      creator_id ${id(22)} NULL,
      executor_id ${id(22)} NULL,
      title VARCHAR(255) NOT NULL,
      prompt MEDIUMTEXT NOT NULL,
      state VARCHAR(16) CHARACTER SET ascii NOT NULL,
      source VARCHAR(32) CHARACTER SET ascii NOT NULL,
      execution_location VARCHAR(8) CHARACTER SET ascii NOT NULL DEFAULT 'REMOTE',
      mode VARCHAR(16) CHARACTER SET ascii NOT NULL DEFAULT 'normal',
      config JSON NOT NULL,
      config_name VARCHAR(255) NULL,
      model_id VARCHAR(128) NULL,
      environment_id ${id(22)} NULL,
      skill_spec VARCHAR(512) NULL,
      schedule_id ${id(36)} NULL,
      schedule_info JSON NULL,
      parent_run_id ${id(36)} NULL,
      root_run_id ${id(36)} NOT NULL,
      depth INT NOT NULL DEFAULT 0,
      conversation_id ${id(36)} NOT NULL,
      session_id ${id(36)} NULL,
      status_message JSON NULL,
      request_usage JSON NULL,
      metadata JSON NULL,
      interactive TINYINT(1) NOT NULL DEFAULT 0,
      execution_count INT NOT NULL DEFAULT 0,
      attempt INT NOT NULL DEFAULT 0,
      lease_owner VARCHAR(64) NULL,
      lease_expires_at DATETIME(3) NULL,
      started_at DATETIME(3) NULL,
      finished_at DATETIME(3) NULL,
      created_at DATETIME(3) NOT NULL,
      updated_at DATETIME(3) NOT NULL,
      KEY idx_runs_team_updated (team_id, updated_at, id),
      KEY idx_runs_team_created (team_id, created_at, id),
      KEY idx_runs_team_state_updated (team_id, state, updated_at, id),
      KEY idx_runs_team_state_created (team_id, state, created_at, id),
      KEY idx_runs_team_title (team_id, title, id),
      KEY idx_runs_team_skill (team_id, skill_spec, id),
      KEY idx_runs_team_name (team_id, config_name),
      KEY idx_runs_team_schedule (team_id, schedule_id),
      KEY idx_runs_team_creator (team_id, creator_id),
      KEY idx_runs_team_executor (team_id, executor_id),
      KEY idx_runs_team_environment (team_id, environment_id),
      KEY idx_runs_state_updated (state, updated_at),
      KEY idx_runs_state_lease (state, lease_expires_at),
      KEY idx_runs_parent (parent_run_id),
      KEY idx_runs_conversation (conversation_id),
      FULLTEXT KEY ft_runs_search (title, prompt, skill_spec)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE run_ancestors (
      ancestor_id ${id(36)} NOT NULL,
      run_id ${id(36)} NOT NULL,
      PRIMARY KEY (ancestor_id, run_id),
      KEY idx_run_ancestors_run (run_id)
    ) ENGINE=InnoDB`);

    await q.query(`CREATE TABLE run_metadata (
      run_id ${id(36)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      meta_key ${id(64)} NOT NULL,
      meta_value VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
      PRIMARY KEY (run_id, meta_key),
      KEY idx_run_metadata_lookup (team_id, meta_key, meta_value)
    ) ENGINE=InnoDB`);

    await q.query(`CREATE TABLE run_events (
      id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
      event_uuid ${id(36)} NOT NULL,
      run_id ${id(36)} NOT NULL,
      execution_id INT NULL,
      event_type VARCHAR(48) CHARACTER SET ascii NOT NULL,
      occurred_at DATETIME(3) NOT NULL,
      payload JSON NULL,
      KEY idx_run_events_run (run_id, id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE run_followups (
      id ${id(36)} NOT NULL PRIMARY KEY,
      run_id ${id(36)} NOT NULL,
      message MEDIUMTEXT NOT NULL,
      mode VARCHAR(16) CHARACTER SET ascii NULL,
      outcome VARCHAR(32) CHARACTER SET ascii NOT NULL,
      execution_id INT NULL,
      consumed_at DATETIME(3) NULL,
      created_at DATETIME(3) NOT NULL,
      KEY idx_run_followups_run (run_id, consumed_at)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE run_attachments (
      id ${id(36)} NOT NULL PRIMARY KEY,
      run_id ${id(36)} NOT NULL,
      file_name VARCHAR(255) NOT NULL,
      mime_type VARCHAR(128) NOT NULL,
      size_bytes INT NOT NULL,
      data MEDIUMBLOB NOT NULL,
      created_at DATETIME(3) NOT NULL,
      KEY idx_run_attachments_run (run_id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE run_artifacts (
      id ${id(22)} NOT NULL PRIMARY KEY,
      run_id ${id(36)} NOT NULL,
      team_id ${id(22)} NOT NULL,
      artifact_type VARCHAR(32) CHARACTER SET ascii NOT NULL,
      data JSON NOT NULL,
      url_hash BINARY(32) NULL,
      created_at DATETIME(3) NOT NULL,
      KEY idx_run_artifacts_run (run_id),
      KEY idx_run_artifacts_type (team_id, artifact_type, run_id),
      KEY idx_run_artifacts_url (team_id, url_hash)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);

    await q.query(`CREATE TABLE run_messages (
      id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
      run_id ${id(36)} NOT NULL,
      execution_id INT NOT NULL,
      message JSON NOT NULL,
      created_at DATETIME(3) NOT NULL,
      KEY idx_run_messages_run (run_id, id)
    ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of [
      'run_messages',
      'run_artifacts',
      'run_attachments',
      'run_followups',
      'run_events',
      'run_metadata',
      'run_ancestors',
      'runs',
      'api_keys',
      'users',
      'teams',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
