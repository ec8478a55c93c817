import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { newUid } from '../../common/ids';
import { RawSql, SqlRunner, Statement } from '../../database/raw-sql';
import type { JsonObject } from '../../common/json';
import { currentRequest } from '../../common/request-context';
import type { Principal } from '../../common/auth/principal';
import { actorOf, AuditBy, AuditTarget } from './audit-actor';
import { AuditEvent } from './audit-event.entity';
import type { AuditOutcome } from './audit-vocabulary';

/**
 * The one writer of the audit log. A change's event is written with the change's own
 * EntityManager, so both commit or neither does; a refused attempt (`denied`) is written in a
 * short transaction of its own, since the refused change never had one. The request id and the
 * caller's address come from the request being served (request-context).
 */
@Injectable()
export class AuditLog {
  private readonly logger = new Logger('Audit');

  private readonly sql: RawSql;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    this.sql = new RawSql(dataSource);
  }

  /** Writes the event of a change in the change's transaction (`manager`). */
  async record(
    manager: EntityManager,
    by: AuditBy,
    action: string,
    target: AuditTarget | null,
    details?: JsonObject,
  ): Promise<void> {
    await this.insert(manager, [this.entry(by, action, target, details)]);
  }

  /**
   * An event ready to insert later (in a batch writer's transaction): the request context is taken
   * now, while the request that asked for the change is the current one.
   */
  entry(
    by: AuditBy,
    action: string,
    target: AuditTarget | null,
    details?: JsonObject,
    outcome: AuditOutcome = 'success',
  ): AuditEvent {
    const actor = actorOf(by);
    const request = currentRequest();
    return {
      id: newUid(),
      occurredAt: new Date(),
      teamId: by.teamId,
      actorType: actor.type,
      actorId: actor.id,
      actorName: actor.name?.slice(0, 255) ?? null,
      actorRole: actor.role,
      onBehalfOfType: actor.onBehalfOf?.type ?? null,
      onBehalfOfId: actor.onBehalfOf?.id.slice(0, 64) ?? null,
      onBehalfOfName: actor.onBehalfOf?.name?.slice(0, 255) ?? null,
      action,
      targetType: target?.type ?? null,
      targetId: target?.id.slice(0, 255) ?? null,
      outcome,
      requestId: request?.requestId ?? null,
      ip: request?.ip ?? null,
      details: details && Object.keys(details).length ? details : null,
    };
  }

  /** Inserts the events with `sql` (a transaction's EntityManager, or a raw one: RawSql). */
  async insert(sql: SqlRunner, events: AuditEvent[]): Promise<void> {
    if (events.length) await this.sql.insertRows(sql, AuditEvent, events);
  }

  /** The statements of `insert`, for a caller that sends them itself (a PackedTransaction). */
  insertStatements(events: AuditEvent[]): Statement[] {
    return this.sql.insertStatements(AuditEvent, events);
  }

  /**
   * Records a refused attempt by an authenticated caller (a role that lacks the permission, a
   * secret of someone else...). Never fails the refusal it records: a lost event is logged.
   */
  async recordDenied(
    principal: Principal,
    action: string,
    target?: AuditTarget | null,
    details?: JsonObject,
  ): Promise<void> {
    const event = this.entry(principal, action, target ?? null, details, 'denied');
    try {
      await this.dataSource.transaction((manager) => this.insert(manager, [event]));
    } catch (err) {
      this.logger.error(`denied ${action} by ${event.actorId} not recorded: ${String(err)}`);
    }
  }

  /**
   * Runs `change` (or a permission check); when it is refused with 403 `not_authorized`, records
   * the attempt as denied (after the change's transaction has ended) and passes the refusal on.
   */
  async deniedOn<T>(
    principal: Principal,
    action: string,
    target: AuditTarget | null,
    change: () => T | Promise<T>,
  ): Promise<T> {
    try {
      return await change();
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_authorized') {
        await this.recordDenied(principal, action, target, { reason: err.detail ?? err.title });
      }
      throw err;
    }
  }
}
