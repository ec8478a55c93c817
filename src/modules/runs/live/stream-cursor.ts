/**
 * Where a client is in a run's live stream: the last timeline event (`run_events.id`) and the last
 * conversation message (`run_messages.id`) it has seen. Every SSE `id:` is this cursor written as
 * `<timeline id>-<message id>` (e.g. `42-17`); both parts only grow along a stream, so any id a
 * client got can be sent back as `Last-Event-ID` to receive exactly what came after it.
 * `0-0` asks for the run's whole history.
 */
export interface StreamCursor {
  timeline: bigint;
  message: bigint;
}

const CURSOR = /^(\d{1,19})-(\d{1,19})$/;

export const STREAM_START: StreamCursor = { timeline: 0n, message: 0n };

export function formatCursor(cursor: StreamCursor): string {
  return `${cursor.timeline}-${cursor.message}`;
}

/** The cursor an id stands for, or null when it is not one of ours. */
export function parseCursor(text: string): StreamCursor | null {
  const match = CURSOR.exec(text.trim());
  if (!match) return null;
  const cursor = { timeline: BigInt(match[1]), message: BigInt(match[2]) };
  // Both ids are BIGINT columns (signed 64-bit).
  const max = 2n ** 63n - 1n;
  return cursor.timeline > max || cursor.message > max ? null : cursor;
}
