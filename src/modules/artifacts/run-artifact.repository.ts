import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { newUid } from '../../common/ids';
import { selectEntities } from '../../database/entity-select';
import type { JsonObject } from '../../common/json';
import { ArtifactType, RunArtifact } from './run-artifact.entity';

/**
 * The `run_artifacts` statements other modules compose into theirs: the run list filters by
 * artifact type inside its own keyset query, with this condition on `<runColumn>`.
 */
export function runHasArtifactOfType(
  runColumn: string,
  teamId: string,
  artifactType: string,
): { sql: string; params: unknown[] } {
  return {
    sql:
      `${runColumn} IN (SELECT rt.run_id FROM run_artifacts rt ` +
      'WHERE rt.team_id = ? AND rt.artifact_type = ?)',
    params: [teamId, artifactType],
  };
}

/** The artifact types whose content is a blob (`artifactBlobKey`); the others are links. */
export const STORED_ARTIFACT_TYPES: readonly ArtifactType[] = ['PLAN', 'FILE', 'SCREENSHOT'];

/** Canonical form of a URL used as a reverse-lookup key (scheme and host lower-cased, no fragment). */
export function urlLookupHash(url: string): Buffer {
  let canonical = url.trim();
  try {
    const parsed = new URL(canonical);
    parsed.hash = '';
    canonical = parsed.toString();
  } catch {
    // Not a URL: look it up as given.
  }
  return createHash('sha256').update(canonical, 'utf8').digest();
}

/** The `run_artifacts` table: what runs reported, by run and by reported URL. */
@Injectable()
export class RunArtifactRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async record(
    run: { id: string; teamId: string },
    artifactType: ArtifactType,
    data: JsonObject,
    options: { id?: string; isPublic?: boolean } = {},
    /** The caller's transaction (a fenced write of an execution, see ExecutionFence). */
    manager: EntityManager = this.dataSource.manager,
  ): Promise<RunArtifact> {
    const url = typeof data.url === 'string' ? data.url : null;
    const artifact: RunArtifact = {
      id: options.id ?? newUid(),
      runId: run.id,
      teamId: run.teamId,
      artifactType,
      data,
      isPublic: options.isPublic ?? false,
      urlHash:
        url && (artifactType === 'EXTERNAL_REFERENCE' || artifactType === 'PULL_REQUEST')
          ? urlLookupHash(url)
          : null,
      createdAt: new Date(),
    };
    await manager.getRepository(RunArtifact).insert(artifact);
    return artifact;
  }

  find(id: string): Promise<RunArtifact | null> {
    return this.dataSource.getRepository(RunArtifact).findOneBy({ id });
  }

  async forRuns(runIds: string[]): Promise<Map<string, RunArtifact[]>> {
    const byRun = new Map<string, RunArtifact[]>();
    if (runIds.length === 0) return byRun;
    const rows = await selectEntities(this.dataSource, RunArtifact, {
      where: 'run_id IN (?)',
      params: [runIds],
      orderBy: 'created_at ASC',
    });
    for (const row of rows) {
      const list = byRun.get(row.runId) ?? [];
      list.push(row);
      byRun.set(row.runId, list);
    }
    return byRun;
  }

  /**
   * Deletes the runs' artifacts whose content is in the blob store (plans, files, screenshots),
   * for the content retention; their ids, whose blobs are the caller's to delete. Links (pull
   * requests, external references) stay: they are the run's record of what it did elsewhere.
   */
  async deleteStoredOfRuns(manager: EntityManager, runIds: string[]): Promise<string[]> {
    if (runIds.length === 0) return [];
    const rows = (await manager.query(
      'SELECT id FROM run_artifacts WHERE run_id IN (?) AND artifact_type IN (?) FOR UPDATE',
      [runIds, STORED_ARTIFACT_TYPES],
    )) as { id: string }[];
    const ids = rows.map((row) => row.id);
    if (ids.length > 0) await manager.query('DELETE FROM run_artifacts WHERE id IN (?)', [ids]);
    return ids;
  }

  /** The newest run of the team that reported this URL as a pull request or external reference. */
  async runIdForUrl(teamId: string, url: string): Promise<string | null> {
    const row = await this.dataSource.getRepository(RunArtifact).findOne({
      select: { runId: true },
      where: { teamId, urlHash: urlLookupHash(url) },
      order: { createdAt: 'DESC' },
    });
    return row?.runId ?? null;
  }
}
