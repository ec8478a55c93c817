import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `sweep_positions`: where the content retention's walk over ended runs stopped, one row shared by
 * the API replicas (each kept its own in memory before, so a replica's sweep walked again what
 * another's had just walked). Empty at first: the next sweep starts from the oldest run, as a
 * replica's first sweep did.
 */
export class SweepPositions1766600000000 implements MigrationInterface {
  name = 'SweepPositions1766600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE `sweep_positions` (`name` varchar(64) CHARACTER SET "ascii" NOT NULL, `after_finished_at` datetime(3) NOT NULL, `after_id` varchar(36) CHARACTER SET "ascii" COLLATE "ascii_bin" NOT NULL, `updated_at` datetime(3) NOT NULL, PRIMARY KEY (`name`)) ENGINE=InnoDB',
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE `sweep_positions`');
  }
}
