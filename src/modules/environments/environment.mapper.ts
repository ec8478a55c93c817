import { DataSource } from 'typeorm';
import { toRfc3339 } from '../../common/time';
import { profile } from '../runs/run-item.mapper';
import type { User } from '../teams/user.entity';
import { EnvironmentConfigDto, EnvironmentDto, LastTaskDto } from './dto/environment.dto';
import type { Environment } from './environment.entity';
import { VisibleEnvironment } from './environments.service';

interface LastTaskRow {
  environment_id: string;
  id: string;
  title: string;
  state: string;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
}

/**
 * The Oz `Environment` shape; `last_task_created` is the caller's own latest run in it. `users`
 * holds the creators and last editors (members of the owning teams).
 */
export async function toEnvironmentDtos(
  dataSource: DataSource,
  teamId: string,
  visible: VisibleEnvironment[],
  users: Map<string, User>,
): Promise<EnvironmentDto[]> {
  const lastTasks = new Map<string, LastTaskDto>();
  for (const { environment } of visible) {
    // One indexed lookup per environment (idx_runs_team_environment); lists are short.
    const [row] = (await dataSource.query(
      `SELECT environment_id, id, title, state, created_at, updated_at, started_at FROM runs
        WHERE team_id = ? AND environment_id = ? ORDER BY created_at DESC, id DESC LIMIT 1`,
      [teamId, environment.id],
    )) as LastTaskRow[];
    if (row) {
      lastTasks.set(environment.id, {
        id: row.id,
        title: row.title,
        state: row.state,
        created_at: toRfc3339(row.created_at)!,
        updated_at: toRfc3339(row.updated_at)!,
        started_at: toRfc3339(row.started_at),
      });
    }
  }
  return visible.map(({ environment, scope }) => {
    const last = lastTasks.get(environment.id);
    const creator = userProfile(users.get(environment.creatorId ?? ''), scope);
    const lastEditor = userProfile(users.get(environment.lastEditorId ?? ''), scope);
    return {
      uid: environment.id,
      config: toEnvironmentConfig(environment),
      last_updated: toRfc3339(environment.updatedAt)!,
      setup_failed: environment.setupFailed,
      ...(last ? { last_task_created: last } : {}),
      last_task_run_timestamp: last ? (last.started_at ?? last.created_at) : null,
      scope: { type: 'Team', uid: environment.teamId },
      access: scope,
      ...(creator ? { creator } : {}),
      ...(lastEditor ? { last_editor: lastEditor } : {}),
    };
  });
}

/** The Oz `EnvironmentConfig` of an environment (also ScheduledAgentItem.environment). */
export function toEnvironmentConfig(environment: Environment): EnvironmentConfigDto {
  const { config } = environment;
  return {
    name: environment.name,
    description: config.description ?? null,
    ...(config.docker_image ? { docker_image: config.docker_image } : {}),
    github_repos: config.github_repos ?? [],
    setup_commands: config.setup_commands ?? [],
    failure_session_retention_minutes: config.failure_session_retention_minutes ?? null,
    secrets: config.secrets ?? [],
    ...(config.providers ? { providers: config.providers } : {}),
    ...(config.network ? { network: config.network } : {}),
    ...(config.resources ? { resources: config.resources } : {}),
  };
}

/** A guest team sees who made the environment, but not the owning team's e-mail addresses. */
function userProfile(user: User | undefined, access: 'owner' | 'guest') {
  const found = profile(user);
  if (!found || access === 'owner') return found;
  const { email: _email, ...withoutEmail } = found;
  return withoutEmail;
}
