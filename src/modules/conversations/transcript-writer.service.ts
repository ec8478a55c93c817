import { Inject, Injectable } from '@nestjs/common';
import { BLOB_STORE, BlobStore } from '../blobs';
import { TranscriptMessageRow, ConversationRunRepository } from '../runs';
import { rawExecutionTranscriptKey } from './transcript-keys';

/**
 * The raw transcripts (JSONL, one stored chat message per line with its run, execution and time)
 * of a run and of its conversation, rendered from `run_messages` when asked
 * (ConversationsService), so that an execution's end writes none of them. An execution whose
 * harness kept its own raw event stream (a vendor CLI) has that stream kept as a blob when it ends
 * (`keepRawStream`), and it stands in the run's transcript for the execution's stored messages;
 * the conversation's transcript is always the stored messages.
 */
@Injectable()
export class TranscriptWriter {
  constructor(
    private readonly runs: ConversationRunRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  /** Keeps an execution's raw event stream, for the run's transcript. */
  async keepRawStream(runId: string, raw: { executionId: number; stream: string }): Promise<void> {
    await this.blobs.put(rawExecutionTranscriptKey(runId, raw.executionId), raw.stream);
  }

  /**
   * The run's and its conversation's transcripts as recorded so far (null before any message):
   * an execution still under way contributes its stored messages, its raw stream not being kept yet.
   * `runId` may be any run of the conversation for the conversation's.
   */
  async render(
    runId: string,
  ): Promise<{ run: string; conversation: string; conversationId: string } | null> {
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
    };
  }
}
