import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Oz error code of the refusal when an automation could not start a delivery's run (beside
 * the existing human-readable `error`), so the delivery log says why in a machine-readable way.
 */
export class DeliveryRunErrorCode1765900000000 implements MigrationInterface {
  name = 'DeliveryRunErrorCode1765900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE webhook_delivery_runs ADD COLUMN error_code VARCHAR(64) NULL AFTER run_id`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE webhook_delivery_runs DROP COLUMN error_code`);
  }
}
