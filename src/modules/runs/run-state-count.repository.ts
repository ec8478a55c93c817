import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { RUN_STATES } from './run-state';

/** Counts of the `runs` table by state (the run gauges). */
@Injectable()
export class RunStateCountRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private db(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }

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
