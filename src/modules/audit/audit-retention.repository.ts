import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** Deleting audit events past their retention (AuditRetentionSweeper). */
@Injectable()
export class AuditRetentionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Deletes up to `limit` of the oldest events that occurred before `cutoff`; how many. */
  async deleteOldest(cutoff: Date, limit: number): Promise<number> {
    const result = (await this.dataSource.query(
      `DELETE FROM audit_events WHERE occurred_at < ? ORDER BY occurred_at LIMIT ${Number(limit)}`,
      [cutoff],
    )) as { affectedRows: number };
    return result.affectedRows;
  }
}
