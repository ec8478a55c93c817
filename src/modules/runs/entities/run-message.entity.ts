import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { asciiId } from '../../../database/column-types';
import type { JsonObject } from '../../../common/json';

/** A chat message of a run's agent loop, kept so a later execution can continue the conversation. */
@Entity('run_messages')
@Index('idx_run_messages_run', ['runId', 'id'])
export class RunMessage {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'run_id', ...asciiId(36) })
  runId: string;

  @Column({ name: 'execution_id', type: 'int' })
  executionId: number;

  @Column({ type: 'json' })
  message: JsonObject;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
