import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import type { JsonObject } from '../../../common/json';

@Entity('run_events')
export class RunEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'event_uuid', type: 'varchar', length: 36 })
  eventUuid: string;

  @Column({ name: 'run_id', type: 'varchar', length: 36 })
  runId: string;

  @Column({ name: 'execution_id', type: 'int', nullable: true })
  executionId: number | null;

  @Column({ name: 'event_type', type: 'varchar', length: 48 })
  eventType: string;

  @Column({ name: 'occurred_at', type: 'datetime', precision: 3 })
  occurredAt: Date;

  @Column({ type: 'json', nullable: true })
  payload: JsonObject | null;
}
