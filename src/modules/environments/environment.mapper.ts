import { toRfc3339 } from '../../common/time';
import { profile } from '../teams';
import type { EnvironmentLatestRun } from './environment-latest-runs';
import type { User } from '../teams';
import {
  EnvironmentConfigDto,
  EnvironmentDto,
  LastTaskDto,
  PendingEnvironmentDto,
} from './dto/environment.dto';
import type { PendingGrant } from './environment-sharing.service';
import type { Environment } from './environment.entity';
import type { VisibleEnvironment } from './environment-access';

/**
 * The Oz `Environment` shape; `last_task_created` is the caller's own latest run in it
 * (`latestRuns`, LatestRunRepository.latestByEnvironment). `users` holds the creators and last editors
 * (members of the owning teams).
 */
export function toEnvironmentDtos(
  visible: VisibleEnvironment[],
  latestRuns: Map<string, EnvironmentLatestRun>,
  users: Map<string, User>,
): EnvironmentDto[] {
  return visible.map(({ environment, scope }) => {
    const latest = latestRuns.get(environment.id);
    const last = latest ? toLastTask(latest) : undefined;
    const creator = userProfile(users.get(environment.creatorId ?? ''), scope);
    const lastEditor = userProfile(users.get(environment.lastEditorId ?? ''), scope);
    return {
      uid: environment.id,
      config: toEnvironmentConfig(environment),
      last_updated: toRfc3339(environment.updatedAt)!,
      setup_failed: environment.setupFailed,
      version: environment.version,
      ...(last ? { last_task_created: last } : {}),
      last_task_run_timestamp: last ? (last.started_at ?? last.created_at) : null,
      scope: { type: 'Team', uid: environment.teamId },
      access: scope,
      ...(creator ? { creator } : {}),
      ...(lastEditor ? { last_editor: lastEditor } : {}),
    };
  });
}

function toLastTask(run: EnvironmentLatestRun): LastTaskDto {
  return {
    id: run.id,
    title: run.title,
    state: run.state,
    created_at: toRfc3339(run.createdAt)!,
    updated_at: toRfc3339(run.updatedAt)!,
    started_at: toRfc3339(run.startedAt),
  };
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
    ...(config.egress_allow ? { egress_allow: config.egress_allow } : {}),
    ...(config.resources ? { resources: config.resources } : {}),
    ...(config.approvals?.length ? { approvals: config.approvals } : {}),
  };
}

/** An offer awaiting the guest team's admin: what is offered, and what the team uses now. */
export function toPendingEnvironmentDto({
  environment,
  grant,
}: PendingGrant): PendingEnvironmentDto {
  const accepted = grant.acceptedConfig;
  return {
    uid: environment.id,
    scope: { type: 'Team', uid: environment.teamId },
    version: environment.version,
    config: toEnvironmentConfig(environment),
    accepted_version: accepted ? grant.acceptedVersion : null,
    accepted_config: accepted ? toEnvironmentConfig({ ...environment, ...accepted }) : null,
    offered_at: toRfc3339(grant.createdAt)!,
  };
}

/** A guest team sees who made the environment, but not the owning team's e-mail addresses. */
function userProfile(user: User | undefined, access: 'owner' | 'guest') {
  const found = profile(user);
  if (!found || access === 'owner') return found;
  const { email: _email, ...withoutEmail } = found;
  return withoutEmail;
}
