/**
 * Blob keys of the raw JSONL transcripts. A run's and a conversation's are rendered from the stored
 * messages when asked and put under their key's rendered snapshot (`renderedTranscriptKey`);
 * only a harness's own raw stream is kept when its execution ends.
 */
export const runTranscriptKey = (runId: string) => `transcripts/run-${runId}.jsonl`;
export const conversationTranscriptKey = (conversationId: string) =>
  `transcripts/conversation-${conversationId}.jsonl`;
/** A harness's own raw event stream for one execution (vendor CLIs), used in the run's transcript. */
export const rawExecutionTranscriptKey = (runId: string, executionId: number) =>
  `transcripts/run-${runId}-execution-${executionId}-raw.jsonl`;
/** A transcript as rendered for one request: what the run or conversation had recorded then. */
export const renderedTranscriptKey = (key: string) => key.replace(/\.jsonl$/, '-rendered.jsonl');

/**
 * Every transcript blob a run may have in the store: its executions' raw streams, the rendered
 * snapshots of its and its conversation's transcripts, and the transcripts stored before they
 * were rendered when asked (older installations). For the content retention.
 */
export function transcriptBlobKeysOf(run: {
  id: string;
  conversationId: string;
  executionCount: number;
}): string[] {
  const executions = Array.from({ length: run.executionCount }, (_, i) => i + 1);
  const stored = [runTranscriptKey(run.id), conversationTranscriptKey(run.conversationId)];
  return [
    ...executions.map((executionId) => rawExecutionTranscriptKey(run.id, executionId)),
    ...stored,
    ...stored.map(renderedTranscriptKey),
  ];
}
