import { watchRun } from '../live/live-client';
import { onUnauthorizedNotify, type Schemas } from './client';
import { storedKey } from './session';

export type RunItem = Schemas['RunItem'];
export type TimelineEvent = Schemas['TimelineEvent'];
export type ConversationMessage = Schemas['ConversationMessage'];

export interface RunStreamHandlers {
  run(run: RunItem): void;
  timeline(event: TimelineEvent): void;
  message(message: ConversationMessage): void;
  /** The run is live (true: its snapshot came), or the connection was lost (false; it reconnects). */
  connected(live: boolean): void;
}

/**
 * Follows a run through the browser's one shared live connection (console/src/live), so any
 * number of open run pages costs one connection. Resolves 'unsupported' when the stream keeps
 * failing or the run is gone, so the caller falls back to polling; 'stopped' when the signal
 * aborts or the sign-in was refused (the console signs out).
 */
export function streamRun(
  runId: string,
  handlers: RunStreamHandlers,
  signal: AbortSignal,
): Promise<'unsupported' | 'stopped'> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve('stopped');
    let stop = (): void => undefined;
    const finish = (outcome: 'unsupported' | 'stopped') => {
      stop();
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = () => finish('stopped');
    signal.addEventListener('abort', onAbort);
    stop = watchRun(runId, storedKey(), {
      event: (event, data) => {
        if (event === 'run') handlers.run(data as RunItem);
        else if (event === 'timeline') handlers.timeline(data as TimelineEvent);
        else handlers.message(data as ConversationMessage);
      },
      status: (status) => {
        if (status === 'live') handlers.connected(true);
        else if (status === 'reconnecting') handlers.connected(false);
        else if (status === 'failed') finish('unsupported');
      },
      gone: () => finish('unsupported'),
      unauthorized: (sentKey) => {
        onUnauthorizedNotify(sentKey);
        finish('stopped');
      },
    });
  });
}
