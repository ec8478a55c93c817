import { Entity, PrimaryColumn } from 'typeorm';

/** Closure rows: one per (ancestor, descendant) pair, so `ancestor_run_id` is one indexed lookup. */
@Entity('run_ancestors')
export class RunAncestor {
  @PrimaryColumn({ name: 'ancestor_id', type: 'varchar', length: 36 })
  ancestorId: string;

  @PrimaryColumn({ name: 'run_id', type: 'varchar', length: 36 })
  runId: string;
}
