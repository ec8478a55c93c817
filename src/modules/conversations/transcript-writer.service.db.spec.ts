import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insertRun } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { LocalDiskBlobStore } from '../blobs';
import { ConversationRunRepository } from '../runs';
import { TranscriptWriter } from './transcript-writer.service';

/** The transcripts rendered from the stored messages and the raw streams kept, on a real database and disk. */
describe('TranscriptWriter (database)', () => {
  const db = useTestDatabase('transcript_writer');
  let root: string;
  let blobs: LocalDiskBlobStore;
  let writer: TranscriptWriter;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-transcripts-'));
    blobs = new LocalDiskBlobStore(root);
    writer = new TranscriptWriter(new ConversationRunRepository(db.dataSource), blobs);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** A run in `conversationId` (its own when omitted). */
  const run = async (conversationId?: string) => {
    const id = await insertRun(db.dataSource, db.teamId, { state: 'SUCCEEDED' });
    if (conversationId) {
      await db.dataSource.query(`UPDATE runs SET conversation_id = ? WHERE id = ?`, [
        conversationId,
        id,
      ]);
    }
    return id;
  };
  const say = (runId: string, executionId: number, content: string) =>
    db.dataSource.query(
      `INSERT INTO run_messages (run_id, execution_id, message, created_at) VALUES (?, ?, ?, ?)`,
      [runId, executionId, JSON.stringify({ role: 'assistant', content }), new Date()],
    );
  const contents = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { message?: { content: string }; raw?: string })
      .map((line) => line.message?.content ?? line.raw);

  it("renders a run's and its conversation's transcripts from the messages recorded so far", async () => {
    const a = await run();
    const b = await run(a);
    await say(a, 1, 'a one');
    await say(b, 1, 'b one');
    await say(a, 2, 'a two');
    const rendered = await writer.render(a);
    expect(rendered?.conversationId).toBe(a);
    expect(contents(rendered!.run)).toEqual(['a one', 'a two']);
    expect(contents(rendered!.conversation)).toEqual(['a one', 'b one', 'a two']);
    expect(contents((await writer.render(b))!.conversation)).toEqual(['a one', 'b one', 'a two']);
    // Nothing stored by rendering.
    expect(await blobs.exists(`transcripts/run-${a}.jsonl`)).toBe(false);
  });

  it("puts an execution's kept raw stream in the run's transcript, the messages in the conversation's", async () => {
    const a = await run();
    await say(a, 1, 'stored one');
    await say(a, 2, 'stored two');
    await writer.keepRawStream(a, { executionId: 2, stream: '{"raw":"cli line"}' });
    const rendered = await writer.render(a);
    expect(contents(rendered!.run)).toEqual(['stored one', 'cli line']);
    expect(contents(rendered!.conversation)).toEqual(['stored one', 'stored two']);
  });

  it('renders nothing for a run without messages', async () => {
    expect(await writer.render(await run())).toBeNull();
  });
});
