import { Injectable, OnModuleInit } from '@nestjs/common';
import { FailedRunFollowups, DebugWindowRepository, KeptWorkspaceRepository } from '../../runs';
import { DEBUG_JOB, DebugAgentQueues } from './debug-agent-queues';

/**
 * The debug window of a run whose environment setup failed: while its workspace is retained, a
 * follow-up starts a debug agent in it instead of a new execution. The run stays FAILED with its
 * original status message; `debug_agent_active` says an agent is at work.
 */
@Injectable()
export class DebugWindowService implements OnModuleInit {
  constructor(
    private readonly debugWindows: DebugWindowRepository,
    private readonly keptWorkspaces: KeptWorkspaceRepository,
    private readonly queues: DebugAgentQueues,
    private readonly failedRunFollowups: FailedRunFollowups,
  ) {}

  onModuleInit(): void {
    this.failedRunFollowups.register((runId) => this.activate(runId));
  }

  /** True when the run is in its debug window: a debug agent is (now) active for it. */
  async activate(runId: string): Promise<boolean> {
    if (!(await this.activateInPlace(runId))) return false;
    const volume = (await this.keptWorkspaces.keptWorkspace(runId))?.volume;
    const queue = volume ? this.queues.forVolume(volume) : this.queues.local();
    // One job per run at a time; a follow-up arriving meanwhile is picked up by the live agent.
    await queue.add(DEBUG_JOB, { runId }, { jobId: `debug:${runId}` });
    return true;
  }

  /** Sets `debug_agent_active` if the window is open; the caller runs (or already is) the agent. */
  activateInPlace(runId: string): Promise<boolean> {
    return this.debugWindows.openDebugAgent(runId, new Date());
  }

  deactivate(runId: string): Promise<void> {
    return this.debugWindows.closeDebugAgent(runId);
  }

  inWindow(runId: string): Promise<boolean> {
    return this.debugWindows.inDebugWindow(runId, new Date());
  }
}
