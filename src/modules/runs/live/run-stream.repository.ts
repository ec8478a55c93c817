import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, MoreThan } from 'typeorm';
import { RunEvent } from '../entities/run-event.entity';
import { RunMessage } from '../entities/run-message.entity';

/** What a live stream reads of a run: its timeline (`run_events`) and messages past a cursor. */
@Injectable()
export class RunStreamRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The ids of the run's latest event and message (null: none yet). */
  async latestIds(runId: string): Promise<{ event: string | null; message: string | null }> {
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
    return { event: events.id, message: messages.id };
  }

  eventsAfter(runId: string, after: bigint, limit: number): Promise<RunEvent[]> {
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

  /** The run's assistant messages before `messageId`, oldest first. */
  assistantMessagesBefore(runId: string, messageId: string): Promise<RunMessage[]> {
    return this.dataSource
      .getRepository(RunMessage)
      .createQueryBuilder('m')
      .where('m.run_id = :runId AND m.id < :messageId', { runId, messageId })
      .andWhere(`JSON_UNQUOTE(JSON_EXTRACT(m.message, '$.role')) = 'assistant'`)
      .orderBy('m.id', 'ASC')
      .getMany();
  }
}
