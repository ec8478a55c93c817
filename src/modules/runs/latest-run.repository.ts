import { Injectable } from '@nestjs/common';
import { EnvironmentLatestRun, EnvironmentLatestRuns } from '../environments';
import { SkillLastRuns } from '../skills';
import { RunState } from './run-state';
import { SqlRepository } from '../../database/sql-repository';

/** The latest runs of environments and skills (what their lists show). */
@Injectable()
export class LatestRunRepository
  extends SqlRepository
  implements EnvironmentLatestRuns, SkillLastRuns
{
  /** When the team last started a run of each skill spec (runs without a skill left out). */
  async lastRunBySkillSpec(teamId: string): Promise<Map<string, Date>> {
    const rows = (await this.db().query(
      `SELECT skill_spec, MAX(created_at) AS last FROM runs
        WHERE team_id = ? AND skill_spec IS NOT NULL GROUP BY skill_spec`,
      [teamId],
    )) as { skill_spec: string; last: Date }[];
    return new Map(rows.map((r) => [r.skill_spec, r.last]));
  }

  /** The team's latest run in each of the environments that has one, by environment id. */
  async latestByEnvironment(
    teamId: string,
    environmentIds: string[],
  ): Promise<Map<string, EnvironmentLatestRun>> {
    const latest = new Map<string, EnvironmentLatestRun>();
    for (const environmentId of environmentIds) {
      // One indexed lookup per environment (idx_runs_team_environment); lists are short.
      const [row] = (await this.db().query(
        `SELECT id, title, state, created_at, updated_at, started_at FROM runs
          WHERE team_id = ? AND environment_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
        [teamId, environmentId],
      )) as {
        id: string;
        title: string;
        state: RunState;
        created_at: Date;
        updated_at: Date;
        started_at: Date | null;
      }[];
      if (!row) continue;
      latest.set(environmentId, {
        id: row.id,
        title: row.title,
        state: row.state,
        createdAt: row.created_at,
        updatedAt: row.updated_at,
        startedAt: row.started_at,
      });
    }
    return latest;
  }
}
