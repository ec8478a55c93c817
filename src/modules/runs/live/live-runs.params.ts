import { ApiError } from '../../../common/errors/api-error';
import { parseCursor, StreamCursor } from './stream-cursor';

/** The most runs one live-runs stream follows; a client with more opens another stream. */
export const MAX_LIVE_RUNS = 50;

export interface LiveRunRequest {
  runId: string;
  /** Where the client is in the run's stream (its last event's `id`); null: from now on. */
  resume: StreamCursor | null;
}

const RUN_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The `runs` query parameter of the live-runs stream: comma-separated run ids, each optionally
 * followed by `@<id>` (the last event id the client got of that run, to resume after it).
 */
export function parseLiveRuns(value: unknown): LiveRunRequest[] {
  if (typeof value !== 'string' || value.trim() === '') {
    throw ApiError.invalid('runs', 'name at least one run: `runs=<run id>[@<event id>],…`');
  }
  const entries = value.split(',');
  if (entries.length > MAX_LIVE_RUNS) {
    throw ApiError.invalid('runs', `at most ${MAX_LIVE_RUNS} runs per stream`);
  }
  const seen = new Set<string>();
  return entries.map((entry) => {
    const at = entry.indexOf('@');
    const runId = (at < 0 ? entry : entry.slice(0, at)).trim();
    if (!RUN_ID.test(runId)) throw ApiError.invalid('runs', `"${entry}" is not a run id`);
    if (seen.has(runId)) throw ApiError.invalid('runs', `run "${runId}" is listed twice`);
    seen.add(runId);
    if (at < 0) return { runId, resume: null };
    const resume = parseCursor(entry.slice(at + 1));
    if (!resume) {
      throw ApiError.invalid(
        'runs',
        `"${entry}": after @ comes an event id of the run (\`<timeline id>-<message id>\`)`,
      );
    }
    return { runId, resume };
  });
}
