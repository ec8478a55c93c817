import { SseEvent, SseParser } from '../common/sse';
import { API_OPTION_HELP, API_OPTIONS, apiTarget, problemText } from './api-http';
import { CliCommand, CliIo, OptionValues } from './cli-command';
import { CommandError } from './cli-errors';
import { RunEventLines } from './run-event-lines';

/** Exit codes of `runs watch` at each terminal state (1: could not watch, 2: bad usage). */
export const WATCH_EXIT_CODES: Record<string, number> = {
  SUCCEEDED: 0,
  FAILED: 3,
  ERROR: 4,
  CANCELLED: 5,
  BLOCKED: 6,
};

/** Connection attempts in a row that may fail (no event received) before watching gives up. */
const MAX_FAILED_ATTEMPTS = 8;
const MAX_BACKOFF_MS = 5000;

export const runsWatchCommand: CliCommand = {
  name: 'runs watch',
  synopsis: 'runs watch <run-id> [--json]',
  summary:
    'Follow a run live: its history so far, then state changes, timeline events and messages as they happen; exits when the run ends.',
  details: [
    '',
    'Options:',
    '  --json          one JSON object per line: {"event","id","data"} as the stream sends it',
    ...API_OPTION_HELP,
    '',
    'Reads GET /agent/runs/{id}/stream and reconnects with Last-Event-ID when the connection',
    'drops (nothing is shown twice or lost). Exit codes: 0 SUCCEEDED, 3 FAILED, 4 ERROR,',
    '5 CANCELLED, 6 BLOCKED; 1 when the run cannot be watched (unknown run, bad key, API down).',
  ],
  options: { ...API_OPTIONS, json: { type: 'boolean' } },
  positionals: ['run-id'],
  async run(values, io) {
    return followRun(values, io, String(values['run-id']));
  },
};

/** Watches a run to its end as `runs watch` does; resolves with the exit code of its end state. */
export async function followRun(values: OptionValues, io: CliIo, runId: string): Promise<number> {
  const lines = new RunEventLines();
  // Readable lines leave out each connection's first snapshot: the history replayed after it
  // is older, and the snapshot that ends the replay says the same.
  const print =
    values.json === true
      ? (e: SseEvent) =>
          io.out(JSON.stringify({ event: e.event, id: e.id, data: JSON.parse(e.data) }))
      : (e: SseEvent, replayHead: boolean) => {
          if (!replayHead) lines.lines(e).forEach((line) => io.out(line));
        };
  const state = await watchRun(apiTarget(values, io), runId, print, io);
  return WATCH_EXIT_CODES[state] ?? 1;
}

export const RUNS_COMMANDS: CliCommand[] = [runsWatchCommand];

/**
 * Follows the stream until the run is in a terminal state and the stream has caught up, and
 * returns that state. Every connection sends the last id seen (`0-0` at first, so the history is
 * shown too); the server answers with a snapshot, the missed events, then the snapshot again,
 * so only a `run` event after the first one of a connection is known to be up to date.
 */
async function watchRun(
  target: { base: string; key: string },
  runId: string,
  print: (event: SseEvent, replayHead: boolean) => void,
  io: CliIo,
): Promise<string> {
  let lastId = '0-0';
  let failures = 0;
  for (;;) {
    const controller = new AbortController();
    let runEvents = 0;
    let ended: string | null = null;
    let refused: string | null = null;
    let received = false;
    const parser = new SseParser((event) => {
      if (ended || refused) return;
      received = true;
      if (event.id) lastId = event.id;
      print(event, event.event === 'run' && runEvents === 0);
      if (event.event === 'error') {
        // The server ends the stream for good after it (the key was revoked): reconnecting cannot
        // help. No abort: the response is ending anyway, and aborting it meanwhile can stall it.
        const status = Number((JSON.parse(event.data) as { status?: unknown }).status) || 0;
        refused = problemText(status, event.data);
        return;
      }
      if (event.event !== 'run') return;
      runEvents += 1;
      const state = (JSON.parse(event.data) as { state: string }).state;
      if (runEvents >= 2 && state in WATCH_EXIT_CODES) {
        ended = state;
        controller.abort();
      }
    });
    const problem = await readStream(target, runId, lastId, parser, controller.signal);
    if (ended) return ended;
    if (refused) throw new CommandError(refused);
    if (problem.fatal) throw new CommandError(problem.message);
    failures = received ? 1 : failures + 1;
    if (failures > MAX_FAILED_ATTEMPTS) throw new CommandError(`giving up: ${problem.message}`);
    const delay = Math.min(MAX_BACKOFF_MS, 250 * 2 ** (failures - 1));
    io.err(`ambient: stream interrupted (${problem.message}); reconnecting in ${delay} ms`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/** Reads one connection to its end; says why it ended and whether trying again can help. */
async function readStream(
  target: { base: string; key: string },
  runId: string,
  lastId: string,
  parser: SseParser,
  signal: AbortSignal,
): Promise<{ message: string; fatal: boolean }> {
  let res: Response;
  try {
    res = await fetch(`${target.base}/agent/runs/${encodeURIComponent(runId)}/stream`, {
      headers: {
        Authorization: `Bearer ${target.key}`,
        Accept: 'text/event-stream',
        'Last-Event-ID': lastId,
      },
      signal,
    });
  } catch (err) {
    return { message: `cannot reach the API at ${target.base} (${causeOf(err)})`, fatal: false };
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    // 4xx will not change by retrying (unknown run, bad key); 5xx and proxies' 502s may.
    return { message: problemText(res.status, text), fatal: res.status < 500 };
  }
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body) parser.push(decoder.decode(chunk, { stream: true }));
    return { message: 'the server ended the stream', fatal: false };
  } catch (err) {
    return { message: signal.aborted ? 'done' : causeOf(err), fatal: false };
  }
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { message?: string } }).cause;
  return cause?.message ?? (err as Error).message;
}
