import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The skill a run resolved at creation ({name, description, full_path} from its SKILL.md), served as
 * `agent_skill`. Works on MySQL 8 and MariaDB 10.6+.
 */
export class RunAgentSkill1763880000000 implements MigrationInterface {
  name = 'RunAgentSkill1763880000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs ADD COLUMN agent_skill JSON NULL AFTER skill_spec`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE runs DROP COLUMN agent_skill`);
  }
}
