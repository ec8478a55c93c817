import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../../database/column-types';
import type { JsonObject } from '../../../common/json';

@Entity('run_events')
@Index('idx_run_events_run', ['runId', 'id'])
export class RunEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'event_uuid', ...asciiId(36) })
  eventUuid: string;

  @Column({ name: 'run_id', ...asciiId(36) })
  runId: string;

  @Column({ name: 'execution_id', type: 'int', nullable: true })
  executionId: number | null;

  @Column({ name: 'event_type', ...asciiWord(48) })
  eventType: string;

  @Column({ name: 'occurred_at', type: 'datetime', precision: 3 })
  occurredAt: Date;

  @Column({ type: 'json', nullable: true })
  payload: JsonObject | null;
}
