import { API_BASE, authHeaders, onUnauthorizedNotify, type Schemas } from './client';
import { SseParser } from './sse';

export type RunItem = Schemas['RunItem'];
export type TimelineEvent = Schemas['TimelineEvent'];
export type ConversationMessage = Schemas['ConversationMessage'];

export interface RunStreamHandlers {
  run(run: RunItem): void;
  timeline(event: TimelineEvent): void;
  message(message: ConversationMessage): void;
  /** The connection is up (true) or lost (false; it reconnects). */
  connected(live: boolean): void;
}

/**
 * GET /agent/runs/{runId}/stream (Ambient's SSE extension), read with fetch because EventSource
 * cannot send the Authorization header. Reconnects with Last-Event-ID. Resolves 'unsupported'
 * when the server has no such endpoint (404/405 before any event), or after repeated failures,
 * so the caller falls back to polling; resolves 'stopped' when the signal aborts.
 */
export async function streamRun(
  runId: string,
  handlers: RunStreamHandlers,
  signal: AbortSignal,
): Promise<'unsupported' | 'stopped'> {
  let lastEventId: string | undefined;
  let failures = 0;
  while (!signal.aborted) {
    let received = false;
    try {
      const headers: Record<string, string> = { ...authHeaders(), Accept: 'text/event-stream' };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      const response = await fetch(`${API_BASE}/agent/runs/${encodeURIComponent(runId)}/stream`, {
        headers,
        signal,
        cache: 'no-store',
      });
      if (response.status === 401) {
        onUnauthorizedNotify('Authorization' in headers);
        return 'stopped';
      }
      const type = response.headers.get('content-type') ?? '';
      if (!response.ok || !response.body || !type.includes('text/event-stream')) {
        await response.body?.cancel();
        return 'unsupported';
      }
      handlers.connected(true);
      const parser = new SseParser();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const event of parser.push(value)) {
          received = true;
          if (event.id) lastEventId = event.id;
          const body = JSON.parse(event.data) as unknown;
          if (event.event === 'run') handlers.run(body as RunItem);
          else if (event.event === 'timeline') handlers.timeline(body as TimelineEvent);
          else if (event.event === 'message') handlers.message(body as ConversationMessage);
        }
      }
    } catch {
      // A network error or a dropped connection: reconnect below (unless the page left).
      if (signal.aborted) return 'stopped';
    }
    handlers.connected(false);
    failures = received ? 0 : failures + 1;
    if (failures >= 3) return 'unsupported';
    await new Promise((resolve) => setTimeout(resolve, 1000 * failures));
  }
  return 'stopped';
}
