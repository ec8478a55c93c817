import { Injectable } from '@nestjs/common';
import { RUN_STATES } from './run-state';
import { SqlRepository } from '../../database/sql-repository';

/** Counts of the `runs` table by state (the run gauges). */
@Injectable()
export class RunStateCountRepository extends SqlRepository {
  /** Runs per state, every state present (one grouped query on the state index). */
  async countByState(): Promise<Record<string, number>> {
    const rows = (await this.db().query(
      'SELECT state, COUNT(*) AS n FROM runs GROUP BY state',
    )) as { state: string; n: string | number }[];
    const counts: Record<string, number> = Object.fromEntries(RUN_STATES.map((s) => [s, 0]));
    for (const row of rows) counts[row.state] = Number(row.n);
    return counts;
  }
}
