import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, IsNull, Not } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { BLOB_STORE, BlobStore } from '../blobs/blob-store';
import { SignedUrl, UrlSigner } from '../blobs/url-signer';
import { Run } from '../runs/entities/run.entity';
import { RunEvent } from '../runs/entities/run-event.entity';
import { RunMessage } from '../runs/entities/run-message.entity';
import { isTerminal } from '../runs/run-state';
import { ExecutionInfo, toConversationSteps } from './conversation.mapper';
import type { Conversation } from './conversation.types';
import { conversationTranscriptKey, liveTranscriptKey, runTranscriptKey } from './transcript-keys';
import { TranscriptWriter } from './transcript-writer.service';

/** Reads a run's or a conversation's messages back as the normalized Oz conversation. */
@Injectable()
export class ConversationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    private readonly signer: UrlSigner,
    private readonly transcripts: TranscriptWriter,
  ) {}

  async forRun(teamId: string, runId: string): Promise<Conversation> {
    const run = await this.visibleRun(teamId, runId);
    return this.build(run.conversationId, [run]);
  }

  async forConversation(teamId: string, conversationId: string): Promise<Conversation> {
    return this.build(conversationId, await this.conversationRuns(teamId, conversationId));
  }

  async runTranscriptUrl(teamId: string, runId: string): Promise<SignedUrl> {
    const run = await this.visibleRun(teamId, runId);
    const filename = `transcript-${runId}.jsonl`;
    if (!isTerminal(run.state)) {
      const live = await this.transcripts.render(run.id);
      if (live) return this.liveUrl(runTranscriptKey(runId), live.run, filename);
    }
    return this.transcriptUrl(runTranscriptKey(runId), filename);
  }

  async conversationTranscriptUrl(teamId: string, conversationId: string): Promise<SignedUrl> {
    const runs = await this.conversationRuns(teamId, conversationId);
    const key = conversationTranscriptKey(conversationId);
    const filename = `transcript-${conversationId}.jsonl`;
    const running = runs.find((run) => !isTerminal(run.state));
    if (running) {
      const live = await this.transcripts.render(running.id);
      if (live) return this.liveUrl(key, live.conversation, filename);
    }
    return this.transcriptUrl(key, filename);
  }

  private async transcriptUrl(key: string, filename: string): Promise<SignedUrl> {
    if (!(await this.blobs.exists(key))) throw ApiError.notFound('transcript');
    return this.signer.sign({ key, contentType: 'application/x-ndjson', filename });
  }

  /**
   * A snapshot of a transcript still growing, under a key of its own: the executor alone writes
   * the final one when an execution ends, so a slow snapshot can never overwrite newer lines.
   */
  private async liveUrl(key: string, text: string, filename: string): Promise<SignedUrl> {
    const live = liveTranscriptKey(key);
    await this.blobs.put(live, text);
    return this.signer.sign({ key: live, contentType: 'application/x-ndjson', filename });
  }

  private async visibleRun(teamId: string, runId: string): Promise<Run> {
    const run = await this.dataSource.getRepository(Run).findOneBy({ id: runId, teamId });
    if (!run) throw ApiError.notFound(`run ${runId}`);
    return run;
  }

  private async conversationRuns(teamId: string, conversationId: string): Promise<Run[]> {
    const runs = await this.dataSource
      .getRepository(Run)
      .find({ where: { conversationId, teamId }, order: { createdAt: 'ASC' } });
    if (runs.length === 0) throw ApiError.notFound(`conversation ${conversationId}`);
    return runs;
  }

  private async build(conversationId: string, runs: Run[]): Promise<Conversation> {
    const rows = await this.dataSource.getRepository(RunMessage).find({
      where: { runId: In(runs.map((r) => r.id)) },
      order: { id: 'ASC' },
    });
    const events = await this.dataSource.getRepository(RunEvent).find({
      where: { runId: In(runs.map((r) => r.id)), executionId: Not(IsNull()) },
      order: { id: 'ASC' },
    });
    if (rows.length === 0 && events.length === 0) {
      throw ApiError.notFound(`conversation ${conversationId} (nothing recorded yet)`);
    }
    const executions: ExecutionInfo[] = runs.flatMap((run) =>
      Array.from({ length: run.executionCount }, (_, i) => ({
        runId: run.id,
        executionId: i + 1,
        title: run.title,
        harness: run.config.harness?.type ?? 'oz',
        summary:
          i + 1 === run.executionCount && isTerminal(run.state)
            ? run.statusMessage?.message
            : undefined,
      })),
    );
    const stepEvents = events.map((e) => ({ ...e, executionId: e.executionId! }));
    return {
      conversation_id: conversationId,
      steps: toConversationSteps(rows, executions, stepEvents),
    };
  }
}
