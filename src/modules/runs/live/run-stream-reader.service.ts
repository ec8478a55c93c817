import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, MoreThan } from 'typeorm';
import { CallIndex, toMessage } from '../conversation/conversation.mapper';
import type { RunItemDto } from '../dto/run-item.dto';
import { RunEvent } from '../entities/run-event.entity';
import { RunMessage } from '../entities/run-message.entity';
import { Run } from '../entities/run.entity';
import { RunsService } from '../runs.service';
import type { StreamCursor } from './stream-cursor';

/** The database reads of a live stream: everything it sends comes from here, never from Redis. */
@Injectable()
export class RunStreamReader {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly runs: RunsService,
  ) {}

  /** Of `runIds`, the runs of the team (as RunsService.findVisible finds them), by id. */
  async visibleRuns(teamId: string, runIds: string[]): Promise<Map<string, Run>> {
    if (runIds.length === 0) return new Map();
    const runs = await this.dataSource.getRepository(Run).findBy({ id: In(runIds), teamId });
    return new Map(runs.map((run) => [run.id, run]));
  }

  item(teamId: string, runId: string): Promise<RunItemDto> {
    return this.runs.getItem(teamId, runId);
  }

  /** The cursor just past everything recorded for the run so far. */
  async latest(runId: string): Promise<StreamCursor> {
    const [[events], [messages]] = await Promise.all([
      this.dataSource.query<{ id: string | null }[]>(
        'SELECT MAX(id) AS id FROM run_events WHERE run_id = ?',
        [runId],
      ),
      this.dataSource.query<{ id: string | null }[]>(
        'SELECT MAX(id) AS id FROM run_messages WHERE run_id = ?',
        [runId],
      ),
    ]);
    return { timeline: BigInt(events.id ?? 0), message: BigInt(messages.id ?? 0) };
  }

  timelineAfter(runId: string, after: bigint, limit: number): Promise<RunEvent[]> {
    return this.dataSource.getRepository(RunEvent).find({
      where: { runId, id: MoreThan(after.toString()) },
      order: { id: 'ASC' },
      take: limit,
    });
  }

  messagesAfter(runId: string, after: bigint, limit: number): Promise<RunMessage[]> {
    return this.dataSource.getRepository(RunMessage).find({
      where: { runId, id: MoreThan(after.toString()) },
      order: { id: 'ASC' },
      take: limit,
    });
  }

  /**
   * The tool calls of the run's messages before `messageId`: a stream that starts mid-conversation
   * needs them to name the call a tool result answers, as the full conversation does.
   */
  async callsBefore(runId: string, messageId: string, harness: string): Promise<CallIndex> {
    const rows = await this.dataSource
      .getRepository(RunMessage)
      .createQueryBuilder('m')
      .where('m.run_id = :runId AND m.id < :messageId', { runId, messageId })
      .andWhere(`JSON_UNQUOTE(JSON_EXTRACT(m.message, '$.role')) = 'assistant'`)
      .orderBy('m.id', 'ASC')
      .getMany();
    const calls: CallIndex = new Map();
    for (const row of rows) toMessage(row, calls, harness);
    return calls;
  }
}
