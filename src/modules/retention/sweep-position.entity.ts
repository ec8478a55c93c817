import { Column, Entity, PrimaryColumn } from 'typeorm';
import { asciiId, asciiWord } from '../../database/column-types';

/**
 * Where a sweep that walks runs in `(finished_at, id)` order stopped, shared by the replicas: the
 * next sweep, in whichever replica, goes on after it. No row: the next sweep starts from the
 * oldest.
 */
@Entity('sweep_positions')
export class SweepPosition {
  @PrimaryColumn(asciiWord(64))
  name: string;

  /** The end time of the last run looked at. */
  @Column({ name: 'after_finished_at', type: 'datetime', precision: 3 })
  afterFinishedAt: Date;

  /** Its id (runs that ended at the same time are walked by id). */
  @Column({ name: 'after_id', ...asciiId(36) })
  afterId: string;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
