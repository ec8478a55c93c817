import { Injectable } from '@nestjs/common';
import { CallIndex, toMessage } from '../conversation/conversation.mapper';
import type { RunItemDto } from '../dto/run-item.dto';
import { RunEvent } from '../entities/run-event.entity';
import { RunMessage } from '../entities/run-message.entity';
import { Run } from '../entities/run.entity';
import { RunLookupRepository } from '../run-lookup.repository';
import { RunsService } from '../runs.service';
import { RunStreamRepository } from './run-stream.repository';
import type { StreamCursor } from './stream-cursor';

/** The database reads of a live stream: everything it sends comes from here, never from Redis. */
@Injectable()
export class RunStreamReader {
  constructor(
    private readonly stream: RunStreamRepository,
    private readonly lookups: RunLookupRepository,
    private readonly runs: RunsService,
  ) {}

  /** Of `runIds`, the runs of the team (as RunsService.findVisible finds them), by id. */
  async visibleRuns(teamId: string, runIds: string[]): Promise<Map<string, Run>> {
    if (runIds.length === 0) return new Map();
    const runs = await this.lookups.findAllOfTeam(runIds, teamId);
    return new Map(runs.map((run) => [run.id, run]));
  }

  item(teamId: string, runId: string): Promise<RunItemDto> {
    return this.runs.getItem(teamId, runId);
  }

  /** The cursor just past everything recorded for the run so far. */
  async latest(runId: string): Promise<StreamCursor> {
    const latest = await this.stream.latestIds(runId);
    return { timeline: BigInt(latest.event ?? 0), message: BigInt(latest.message ?? 0) };
  }

  timelineAfter(runId: string, after: bigint, limit: number): Promise<RunEvent[]> {
    return this.stream.eventsAfter(runId, after, limit);
  }

  messagesAfter(runId: string, after: bigint, limit: number): Promise<RunMessage[]> {
    return this.stream.messagesAfter(runId, after, limit);
  }

  /**
   * The tool calls of the run's messages before `messageId`: a stream that starts mid-conversation
   * needs them to name the call a tool result answers, as the full conversation does.
   */
  async callsBefore(runId: string, messageId: string, harness: string): Promise<CallIndex> {
    const rows = await this.stream.assistantMessagesBefore(runId, messageId);
    const calls: CallIndex = new Map();
    for (const row of rows) toMessage(row, calls, harness);
    return calls;
  }
}
