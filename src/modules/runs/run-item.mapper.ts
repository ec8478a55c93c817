import { isoDuration, toRfc3339 } from '../../common/time';
import type { RunArtifact } from '../artifacts';
import { withMaskedMcpServers } from '../secrets';
import type { User } from '../teams';
import type { ArtifactItemDto, RunItemDto, TimelineEventDto } from './dto/run-item.dto';
import { profile } from '../teams';
import type { Run } from './entities/run.entity';
import type { RunEvent } from './entities/run-event.entity';
import { runPageUrl, sessionIdOf, triggerUrlOf } from './run-links';

/** Runs of these kinds are executed outside Ambient and cannot be cancelled from here. */
export const UNCANCELLABLE_SOURCES = ['LOCAL', 'GITHUB_ACTION'];

export function isCancellableType(run: Pick<Run, 'source' | 'executionLocation'>): boolean {
  return run.executionLocation !== 'LOCAL' && !UNCANCELLABLE_SOURCES.includes(run.source);
}

function artifactItem(artifact: RunArtifact): ArtifactItemDto {
  return {
    artifact_type: artifact.artifactType,
    created_at: artifact.createdAt.toISOString(),
    data: artifact.data,
  };
}

/** The Oz RunItem for a run, with optional fields left out rather than sent as null. */
export function toRunItem(
  run: Run,
  related: {
    users: Map<string, User>;
    artifacts: RunArtifact[];
    now?: Date;
    /** The server's public URL, for `session_link`. */
    publicUrl?: string;
  },
): RunItemDto {
  const now = related.now ?? new Date();
  const item: RunItemDto = {
    run_id: run.id,
    task_id: run.id,
    root_run_id: run.rootRunId,
    title: run.title,
    state: run.state,
    prompt: run.prompt,
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    started_at: toRfc3339(run.startedAt),
    finished_at: toRfc3339(run.finishedAt),
    execution_location: run.executionLocation,
    source: run.source,
    agent_config: withMaskedMcpServers(run.config),
    conversation_id: run.conversationId,
    is_sandbox_running: run.state === 'CLAIMED' || run.state === 'INPROGRESS',
    is_run_type_cancellable: isCancellableType(run),
    artifacts: related.artifacts.map(artifactItem),
    scope: { type: 'Team', uid: run.teamId },
    debug_agent_available: debugAgentAvailable(run, now),
  };
  const creator = profile(related.users.get(run.creatorId ?? ''));
  if (creator) item.creator = creator;
  const executor = profile(related.users.get(run.executorId ?? ''));
  if (executor) item.executor = executor;
  if (run.statusMessage) item.status_message = run.statusMessage;
  if (run.requestUsage) item.request_usage = run.requestUsage;
  if (run.scheduleInfo) item.schedule = run.scheduleInfo;
  if (run.parentRunId) item.parent_run_id = run.parentRunId;
  const sessionId = sessionIdOf(run);
  if (sessionId) {
    item.session_id = sessionId;
    if (related.publicUrl) item.session_link = runPageUrl(related.publicUrl, run.id);
  }
  const triggerUrl = related.publicUrl ? triggerUrlOf(related.publicUrl, run) : undefined;
  if (triggerUrl) item.trigger_url = triggerUrl;
  if (run.metadata && Object.keys(run.metadata).length) item.metadata = run.metadata;
  if (run.agentSkill) {
    item.agent_skill = { ...run.agentSkill };
  } else if (run.skillSpec) {
    // Not resolved (no environment): only the spec is known.
    item.agent_skill = { name: skillName(run.skillSpec), full_path: run.skillSpec };
  }
  if (run.executionCount > 0) {
    item.executions = run.executionCount;
    item.run_time = isoDuration(runTimeMs(run, now));
  }
  if (run.state === 'QUEUED' && run.atCapacity) item.at_capacity = true;
  return item;
}

/**
 * How long the run's executions ran, the running one until `now`: the idle time between them
 * (before a follow-up, while BLOCKED on a person, QUEUED for a slot) does not count.
 */
export function runTimeMs(run: Pick<Run, 'runTimeMs' | 'executionStartedAt'>, now: Date): number {
  const running = run.executionStartedAt
    ? Math.max(0, now.getTime() - run.executionStartedAt.getTime())
    : 0;
  return run.runTimeMs + running;
}

/** One element of `GET /agent/runs/{runId}/timeline`'s `events` (and of the live stream). */
export function toTimelineEvent(e: RunEvent): TimelineEventDto {
  return {
    event_type: e.eventType,
    event_uuid: e.eventUuid,
    occurred_at: e.occurredAt.toISOString(),
    run_id: e.runId,
    ...(e.executionId !== null ? { execution_id: e.executionId } : {}),
    ...(e.payload ? { payload: e.payload } : {}),
  };
}

/**
 * Whether a follow-up would start a debug agent: the run failed in environment setup and its
 * workspace is still kept (the same test `DebugWindowService.activateInPlace` makes).
 */
export function debugAgentAvailable(
  run: Pick<Run, 'state' | 'statusMessage' | 'workspaceRetainedUntil'>,
  now: Date,
): boolean {
  return (
    run.state === 'FAILED' &&
    run.statusMessage?.error_code === 'environment_setup_failed' &&
    !!run.workspaceRetainedUntil &&
    run.workspaceRetainedUntil.getTime() > now.getTime()
  );
}

/**
 * The skill's name from a spec such as `owner/repo:path/to/deploy/SKILL.md` (→ `deploy`) or
 * `repo:review` (→ `review`).
 */
export function skillName(spec: string): string {
  const path = spec.includes(':') ? spec.slice(spec.indexOf(':') + 1) : spec;
  const parts = path.split('/').filter(Boolean);
  if (parts.length && /^skill\.md$/i.test(parts[parts.length - 1])) parts.pop();
  return parts[parts.length - 1] ?? spec;
}
