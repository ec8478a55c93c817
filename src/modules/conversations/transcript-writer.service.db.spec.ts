import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insertRun } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import { LocalDiskBlobStore } from '../blobs';
import { ConversationRunRepository } from '../runs';
import { conversationTranscriptKey, runTranscriptKey } from './transcript-keys';
import { TranscriptWriter } from './transcript-writer.service';

/** What the transcript writer stores when an execution ends, on a real database and disk. */
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
  const stored = async (key: string) =>
    (await blobs.get(key))?.data
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { message: { content: string } }).message.content) ??
    null;

  it("stores a run's transcript, and its conversation's only once it holds a second execution", async () => {
    const a = await run();
    await say(a, 1, 'one');
    await writer.write(a);
    expect(await stored(runTranscriptKey(a))).toEqual(['one']);
    expect(await stored(conversationTranscriptKey(a))).toBeNull();

    await say(a, 2, 'two');
    await writer.write(a);
    expect(await stored(conversationTranscriptKey(a))).toEqual(['one', 'two']);
  });

  it('stores the conversation once another run of it has messages too', async () => {
    const a = await run();
    const b = await run(a);
    await say(a, 1, 'from a');
    await say(b, 1, 'from b');
    await writer.write(b);
    expect(await stored(conversationTranscriptKey(a))).toEqual(['from a', 'from b']);
  });

  it('stores nothing for the conversation when a run of it ends without messages while another goes on', async () => {
    const a = await run();
    const b = await run(a);
    await say(a, 1, 'so far');
    await writer.write(b);
    expect(await stored(conversationTranscriptKey(a))).toBeNull();
  });

  it('brings a conversation transcript stored before up to date, though it holds one execution', async () => {
    const a = await run();
    await say(a, 1, 'first line');
    await blobs.put(
      conversationTranscriptKey(a),
      JSON.stringify({ message: { content: 'first line' } }) + '\n',
    );
    await say(a, 1, 'second line');
    await writer.write(a);
    expect(await stored(conversationTranscriptKey(a))).toEqual(['first line', 'second line']);
  });
});
