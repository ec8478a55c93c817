import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { RawSql, Statement } from '../../database/raw-sql';
import { Run } from './entities/run.entity';
import { RunAttachment } from './entities/run-attachment.entity';
import { RunEvent } from './entities/run-event.entity';
import { RunMetadata } from './entities/run-metadata.entity';

/** A run's metadata pairs as `run_metadata` rows. */
function metadataRows(run: Pick<Run, 'id' | 'teamId' | 'metadata'>): Partial<RunMetadata>[] {
  return Object.entries(run.metadata ?? {}).map(([key, value]) => ({
    runId: run.id,
    teamId: run.teamId,
    key,
    value,
  }));
}

/**
 * The statements that store new runs with their metadata pairs: a batch of standalone runs
 * (NewRunWriter) or a run with its ancestry and attachments in a caller's transaction.
 */
@Injectable()
export class NewRunRepository {
  private readonly sql: RawSql;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.sql = new RawSql(dataSource);
  }

  /** The runs, their metadata pairs and `events`, one multi-row INSERT per table. */
  insertStatements(runs: Run[], events: Partial<RunEvent>[]): Statement[] {
    return [
      ...this.sql.insertStatements(Run, runs),
      ...this.sql.insertStatements(RunMetadata, runs.flatMap(metadataRows)),
      ...this.sql.insertStatements(RunEvent, events),
    ];
  }

  /**
   * Whether any of these runs is stored, read in a transaction of its own with a share lock (it
   * waits for a commit still under way).
   */
  async anyStored(runIds: string[]): Promise<boolean> {
    const found = (await this.sql.transaction((sql) =>
      sql.query(`SELECT COUNT(*) AS n FROM runs WHERE id IN (?) LOCK IN SHARE MODE`, [runIds]),
    )) as { n: number | string }[];
    return Number(found[0]?.n ?? 0) > 0;
  }

  /**
   * Inserts the run and its metadata pairs in `manager`'s transaction, and with a parent the
   * run's ancestry (the parent's ancestors and the parent).
   */
  async insert(manager: EntityManager, run: Run, parent: Run | null): Promise<void> {
    await manager.getRepository(Run).insert(run);
    if (run.metadata) await manager.getRepository(RunMetadata).insert(metadataRows(run));
    if (parent) {
      await manager.query(
        `INSERT INTO run_ancestors (ancestor_id, run_id)
           SELECT ancestor_id, ? FROM run_ancestors WHERE run_id = ?
           UNION ALL SELECT ?, ?`,
        [run.id, parent.id, parent.id, run.id],
      );
    }
  }

  async insertAttachments(manager: EntityManager, attachments: RunAttachment[]): Promise<void> {
    await manager.getRepository(RunAttachment).insert(attachments);
  }
}
