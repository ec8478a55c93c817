import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BLOB_STORE, BlobStore } from '../blobs/blob-store';
import {
  conversationTranscriptKey,
  rawExecutionTranscriptKey,
  runTranscriptKey,
} from './transcript-keys';

interface TranscriptRow {
  id: string;
  run_id: string;
  execution_id: number;
  created_at: Date;
  message: string | Record<string, unknown>;
}

/**
 * Writes the raw transcripts (JSONL, one stored chat message per line with its run, execution
 * and time) of a run and of its conversation as blobs. Called when an execution ends, so each
 * blob is rewritten with everything recorded up to then. An execution whose harness kept its own
 * raw event stream (a vendor CLI) contributes that stream to the run's transcript instead of its
 * stored messages; the conversation's transcript is always the stored messages.
 */
@Injectable()
export class TranscriptWriter {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  async write(runId: string, raw?: { executionId: number; stream: string }): Promise<void> {
    if (raw) await this.blobs.put(rawExecutionTranscriptKey(runId, raw.executionId), raw.stream);
    const transcripts = await this.render(runId);
    if (!transcripts) return;
    await this.blobs.put(runTranscriptKey(runId), transcripts.run);
    await this.blobs.put(
      conversationTranscriptKey(transcripts.conversationId),
      transcripts.conversation,
    );
  }

  /**
   * The run's and its conversation's transcripts as recorded so far (null before any message):
   * an execution still under way contributes its stored messages, its raw stream not being kept yet.
   */
  async render(
    runId: string,
  ): Promise<{ run: string; conversation: string; conversationId: string } | null> {
    const rows = (await this.dataSource.query(
      `SELECT m.id, m.run_id, m.execution_id, m.created_at, m.message, r.conversation_id
         FROM runs r JOIN runs c ON c.conversation_id = r.conversation_id AND c.team_id = r.team_id
         JOIN run_messages m ON m.run_id = c.id
        WHERE r.id = ? ORDER BY m.id`,
      [runId],
    )) as (TranscriptRow & { conversation_id: string })[];
    if (rows.length === 0) return null;
    const line = (r: TranscriptRow) =>
      JSON.stringify({
        id: String(r.id),
        run_id: r.run_id,
        execution_id: r.execution_id,
        created_at: new Date(r.created_at).toISOString(),
        message: typeof r.message === 'string' ? JSON.parse(r.message) : r.message,
      });
    const runRows = rows.filter((r) => r.run_id === runId);
    const executionIds = [...new Set(runRows.map((r) => r.execution_id))].sort((a, b) => a - b);
    const parts: string[] = [];
    for (const executionId of executionIds) {
      const stored = await this.blobs.get(rawExecutionTranscriptKey(runId, executionId));
      const text = stored
        ? stored.data.toString('utf8')
        : runRows
            .filter((r) => r.execution_id === executionId)
            .map(line)
            .join('\n');
      if (text) parts.push(text.endsWith('\n') ? text : text + '\n');
    }
    return {
      run: parts.join(''),
      conversation: rows.map(line).join('\n') + '\n',
      conversationId: rows[0].conversation_id,
    };
  }
}
