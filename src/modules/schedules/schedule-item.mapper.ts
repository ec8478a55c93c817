import { toRfc3339 } from '../../common/time';
import type { Environment } from '../environments';
import { toEnvironmentConfig } from '../environments';
import { profile } from '../teams';
import { withMaskedMcpServers } from '../secrets';
import type { User } from '../teams';
import type { ScheduledAgentItemDto } from './dto/scheduled-agent-item.dto';
import type { Schedule } from './schedule.entity';

/** The Oz ScheduledAgentItem; `history.next_run` is null while the schedule is paused. */
export function toScheduledAgentItem(
  schedule: Schedule,
  users: Map<string, User>,
  environments: Map<string, Environment> = new Map(),
): ScheduledAgentItemDto {
  const item: ScheduledAgentItemDto = {
    id: schedule.id,
    name: schedule.name,
    cron_schedule: schedule.cronSchedule,
    enabled: schedule.enabled,
    prompt: schedule.prompt,
    agent_config: schedule.agentConfig ? withMaskedMcpServers(schedule.agentConfig) : {},
    created_at: schedule.createdAt.toISOString(),
    updated_at: schedule.updatedAt.toISOString(),
    history: {
      last_ran: toRfc3339(schedule.lastRanAt),
      next_run: schedule.enabled ? toRfc3339(schedule.nextRunAt) : null,
    },
    last_spawn_error: schedule.lastSpawnError,
    scope: { type: 'Team', uid: schedule.teamId },
  };
  const environment = environments.get(schedule.agentConfig?.environment_id ?? '');
  if (environment) item.environment = toEnvironmentConfig(environment);
  if (schedule.agentUid) item.agent_uid = schedule.agentUid;
  if (schedule.metadata && Object.keys(schedule.metadata).length) item.metadata = schedule.metadata;
  const createdBy = profile(users.get(schedule.createdBy ?? ''));
  if (createdBy) item.created_by = createdBy;
  const updatedBy = profile(users.get(schedule.updatedBy ?? ''));
  if (updatedBy) item.updated_by = updatedBy;
  return item;
}
