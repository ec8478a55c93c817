import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { RUN_STATES } from './run-state';

/**
 * The `runs` table's statements for the modules around the run lifecycle (execution, workspaces,
 * the debug window, metrics): every read and write of a run row outside src/modules/runs goes
 * through here, so the table's invariants (state machine, fencing columns, retention columns)
 * are kept in one module. `manager` joins a caller's transaction.
 */
@Injectable()
export class RunRecords {
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
