import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, DataSource } from 'typeorm';
import { decodeAuditCursor, encodeAuditCursor } from './audit-cursor';
import { AuditEvent } from './audit-event.entity';
import type { AuditEventListParams } from './audit-events.params';

export interface AuditEventPage {
  events: AuditEvent[];
  nextCursor: string | null;
}

/** Reads a team's audit log, newest first, in keyset pages over (occurred_at, id). */
@Injectable()
export class AuditEventsQuery {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async page(teamId: string, params: AuditEventListParams): Promise<AuditEventPage> {
    const { filters, limit } = params;
    const after = params.cursor ? decodeAuditCursor(params.cursor, filters) : null;
    const query = this.dataSource
      .getRepository(AuditEvent)
      .createQueryBuilder('e')
      .where('e.team_id = :teamId', { teamId });
    if (filters.action?.endsWith('.*')) {
      query.andWhere('e.action LIKE :prefix', { prefix: `${filters.action.slice(0, -1)}%` });
    } else if (filters.action) {
      query.andWhere('e.action = :action', { action: filters.action });
    }
    if (filters.actorId) query.andWhere('e.actor_id = :actorId', { actorId: filters.actorId });
    if (filters.targetType) {
      query.andWhere('e.target_type = :targetType', { targetType: filters.targetType });
    }
    if (filters.targetId) query.andWhere('e.target_id = :targetId', { targetId: filters.targetId });
    if (filters.outcome) query.andWhere('e.outcome = :outcome', { outcome: filters.outcome });
    if (filters.since) query.andWhere('e.occurred_at >= :since', { since: filters.since });
    if (filters.until) query.andWhere('e.occurred_at < :until', { until: filters.until });
    if (after) {
      query.andWhere(
        new Brackets((q) =>
          q
            .where('e.occurred_at < :at', { at: after.occurredAt })
            .orWhere('e.occurred_at = :at AND e.id < :id', { id: after.id }),
        ),
      );
    }
    const rows = await query
      .orderBy('e.occurred_at', 'DESC')
      .addOrderBy('e.id', 'DESC')
      .limit(limit + 1)
      .getMany();
    const events = rows.slice(0, limit);
    const last = events[events.length - 1];
    return {
      events,
      nextCursor: rows.length > limit && last ? encodeAuditCursor(filters, last) : null,
    };
  }
}
