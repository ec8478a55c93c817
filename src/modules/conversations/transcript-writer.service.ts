import { Inject, Injectable } from '@nestjs/common';
import { BLOB_STORE, BlobStore } from '../blobs';
import { TranscriptMessageRow, ConversationRunRepository } from '../runs';
import {
  conversationTranscriptKey,
  rawExecutionTranscriptKey,
  runTranscriptKey,
} from './transcript-keys';

/**
 * Writes the raw transcripts (JSONL, one stored chat message per line with its run, execution
 * and time) of a run and of its conversation as blobs. Called when an execution ends, so each
 * blob is rewritten with everything recorded up to then; a conversation's only once it holds
 * messages of more than one execution. An execution whose harness kept its own raw event stream
 * (a vendor CLI) contributes that stream to the run's transcript instead of its stored messages;
 * the conversation's transcript is always the stored messages.
 */
@Injectable()
export class TranscriptWriter {
  constructor(
    private readonly runs: ConversationRunRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  async write(runId: string, raw?: { executionId: number; stream: string }): Promise<void> {
    if (raw) await this.blobs.put(rawExecutionTranscriptKey(runId, raw.executionId), raw.stream);
    const transcripts = await this.render(runId);
    if (!transcripts) return;
    await this.blobs.put(runTranscriptKey(runId), transcripts.run);
    // A conversation of one execution's messages (most are) is not stored a second time:
    // ConversationsService renders it when asked. One an earlier version stored is brought up to
    // date, since it would be served as it is.
    const key = conversationTranscriptKey(transcripts.conversationId);
    if (transcripts.oneExecution && !(await this.blobs.exists(key))) return;
    await this.blobs.put(key, transcripts.conversation);
  }

  /**
   * The run's and its conversation's transcripts as recorded so far (null before any message):
   * an execution still under way contributes its stored messages, its raw stream not being kept yet.
   */
  async render(runId: string): Promise<{
    run: string;
    conversation: string;
    conversationId: string;
    /** The conversation's messages are all of one execution (of this run, or another). */
    oneExecution: boolean;
  } | null> {
    const rows = await this.runs.transcriptMessagesOf(runId);
    if (rows.length === 0) return null;
    const line = (r: TranscriptMessageRow) =>
      JSON.stringify({
        id: r.id,
        run_id: r.runId,
        execution_id: r.executionId,
        created_at: r.createdAt.toISOString(),
        message: r.message,
      });
    const runRows = rows.filter((r) => r.runId === runId);
    const executionIds = [...new Set(runRows.map((r) => r.executionId))].sort((a, b) => a - b);
    const parts: string[] = [];
    for (const executionId of executionIds) {
      const stored = await this.blobs.get(rawExecutionTranscriptKey(runId, executionId));
      const text = stored
        ? stored.data.toString('utf8')
        : runRows
            .filter((r) => r.executionId === executionId)
            .map(line)
            .join('\n');
      if (text) parts.push(text.endsWith('\n') ? text : text + '\n');
    }
    return {
      run: parts.join(''),
      conversation: rows.map(line).join('\n') + '\n',
      conversationId: rows[0].conversationId,
      oneExecution: new Set(rows.map((r) => `${r.runId}:${r.executionId}`)).size === 1,
    };
  }
}
