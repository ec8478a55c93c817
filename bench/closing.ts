/** How long an interrupted bench waits for what it started to close. */
const CLOSE_TIMEOUT_MS = 60_000;

const open = new Set<() => Promise<unknown>>();
let installed = false;

/**
 * Registers what a bench started (an app and its pool, a worker process, sandboxes) to be closed
 * if the bench ends without reaching its own `finally`: interrupted (SIGINT, SIGTERM) or on an
 * error nobody catches. Returns the release to call once the bench closes it itself.
 */
export function closeOnExit(close: () => Promise<unknown>): () => void {
  if (!installed) install();
  open.add(close);
  return () => open.delete(close);
}

function install(): void {
  installed = true;
  process.once('SIGINT', () => void closeAllAndExit(130, 'interrupted (SIGINT)'));
  process.once('SIGTERM', () => void closeAllAndExit(143, 'stopped (SIGTERM)'));
  process.once('uncaughtException', (err) => void closeAllAndExit(1, err.stack ?? err.message));
  process.once('unhandledRejection', (err) => void closeAllAndExit(1, String(err)));
}

async function closeAllAndExit(code: number, why: string): Promise<void> {
  process.stderr.write(`bench ${why}: closing what it started\n`);
  const closers = [...open];
  open.clear();
  const timeout = new Promise((resolve) => setTimeout(resolve, CLOSE_TIMEOUT_MS).unref());
  await Promise.race([Promise.allSettled(closers.map((close) => close())), timeout]);
  process.exit(code);
}
