/** Blob keys of the raw JSONL transcripts: one per run, one per conversation. */
export const runTranscriptKey = (runId: string) => `transcripts/run-${runId}.jsonl`;
export const conversationTranscriptKey = (conversationId: string) =>
  `transcripts/conversation-${conversationId}.jsonl`;
/** A harness's own raw event stream for one execution (vendor CLIs), used in the run's transcript. */
export const rawExecutionTranscriptKey = (runId: string, executionId: number) =>
  `transcripts/run-${runId}-execution-${executionId}-raw.jsonl`;
/** What a run (or conversation) in progress has recorded so far, refreshed when it is asked for. */
export const liveTranscriptKey = (key: string) => key.replace(/\.jsonl$/, '-live.jsonl');
