import { Injectable } from '@nestjs/common';
import { SqlRepository } from '../../database/sql-repository';

/** A walked run: the sort key a walk goes on after. */
export interface WalkPosition {
  finishedAt: Date;
  id: string;
}

/** The `sweep_positions` rows (SweepPosition). */
@Injectable()
export class SweepPositionRepository extends SqlRepository {
  /** Where the sweep `name` stopped; undefined when it starts from the oldest. */
  async get(name: string): Promise<WalkPosition | undefined> {
    const [row] = (await this.db().query(
      'SELECT after_finished_at, after_id FROM sweep_positions WHERE name = ?',
      [name],
    )) as { after_finished_at: Date; after_id: string }[];
    return row ? { finishedAt: row.after_finished_at, id: row.after_id } : undefined;
  }

  /** Records where the sweep stopped, or (undefined) that its next one starts from the oldest. */
  async set(name: string, position: WalkPosition | undefined, now: Date): Promise<void> {
    if (!position) {
      await this.db().query('DELETE FROM sweep_positions WHERE name = ?', [name]);
      return;
    }
    await this.db().query(
      'INSERT INTO sweep_positions (name, after_finished_at, after_id, updated_at) VALUES (?, ?, ?, ?) ' +
        'ON DUPLICATE KEY UPDATE after_finished_at = VALUES(after_finished_at), ' +
        'after_id = VALUES(after_id), updated_at = VALUES(updated_at)',
      [name, position.finishedAt, position.id, now],
    );
  }
}
