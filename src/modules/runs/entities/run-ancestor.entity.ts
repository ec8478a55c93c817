import { Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../../database/column-types';

/** Closure rows: one per (ancestor, descendant) pair, so `ancestor_run_id` is one indexed lookup. */
@Entity('run_ancestors')
@Index('idx_run_ancestors_run', ['runId'])
export class RunAncestor {
  @PrimaryColumn({ name: 'ancestor_id', ...asciiId(36) })
  ancestorId: string;

  @PrimaryColumn({ name: 'run_id', ...asciiId(36) })
  runId: string;
}
