import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A team's network policy, set by its admins: whether its environments may use `network: egress`
 * (any outside host). No row: allowed, as before the policy existed.
 */
export class TeamNetworkPolicies1765100000000 implements MigrationInterface {
  name = 'TeamNetworkPolicies1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE team_network_policies (
      team_id VARCHAR(22) NOT NULL,
      egress_open_allowed TINYINT(1) NOT NULL DEFAULT 1,
      updated_at DATETIME(3) NOT NULL,
      PRIMARY KEY (team_id)
    ) ENGINE=InnoDB`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE team_network_policies`);
  }
}
