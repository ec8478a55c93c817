import { SseParser } from '../api/sse';
import type { LiveEventName } from './protocol';

export interface LiveStreamHandlers {
  /** The server answered with the stream. */
  opened(): void;
  /** An event of a run; `id` is the run's cursor, to resume after it. */
  event(runId: string, event: LiveEventName, id: string, data: unknown): void;
  /** The run does not exist for this credential (or was deleted). */
  gone(runId: string, detail: string): void;
}

/**
 * How a stream ended: the connection closed or broke ('ended'), the credential was refused
 * ('unauthorized'), the server answered something else than the stream ('refused'), or the hub
 * stopped it ('aborted').
 */
export type LiveStreamEnd = 'ended' | 'unauthorized' | 'refused' | 'aborted';

interface Envelope {
  run_id: string;
  id?: string;
  data?: unknown;
  error?: { detail?: string; status?: number };
}

/**
 * Reads one connection of GET /console/live-runs with fetch (EventSource cannot send the
 * Authorization header) until it ends; `key` null sends the session cookie instead.
 */
export async function readLiveRuns(
  url: string,
  key: string | null,
  handlers: LiveStreamHandlers,
  signal: AbortSignal,
  fetchImpl: typeof fetch = fetch,
): Promise<LiveStreamEnd> {
  try {
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (key) headers.Authorization = `Bearer ${key}`;
    const response = await fetchImpl(url, { headers, signal });
    if (response.status === 401) return 'unauthorized';
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || !response.body || !type.includes('text/event-stream')) {
      await response.body?.cancel();
      return 'refused';
    }
    handlers.opened();
    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return signal.aborted ? 'aborted' : 'ended';
      for (const event of parser.push(value)) {
        if (event.event === 'error') {
          // The server's last word (an Oz Error): the key that opened it stopped authenticating.
          const problem = JSON.parse(event.data) as { status?: number };
          if (problem.status !== 401) continue;
          await reader.cancel();
          return 'unauthorized';
        }
        const body = JSON.parse(event.data) as Envelope;
        if (event.event === 'gone') {
          handlers.gone(body.run_id, body.error?.detail ?? 'not found');
        } else if (
          event.event === 'run' ||
          event.event === 'timeline' ||
          event.event === 'message'
        ) {
          handlers.event(body.run_id, event.event, body.id ?? '', body.data);
        }
      }
    }
  } catch {
    return signal.aborted ? 'aborted' : 'ended';
  }
}
