/** Blob keys of the raw JSONL transcripts: one per run, one per conversation. */
export const runTranscriptKey = (runId: string) => `transcripts/run-${runId}.jsonl`;
export const conversationTranscriptKey = (conversationId: string) =>
  `transcripts/conversation-${conversationId}.jsonl`;
