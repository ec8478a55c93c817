import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { TS_REGISTER } from './ts-register-path';

const ROOT = resolve(__dirname, '../..');
/**
 * Start-up on a loaded machine compiles thousands of modules (25–55 s seen); this long means it
 * is stuck (its output says where), and it is killed.
 */
const READY_WITHIN_MS = 100_000;

/** Ambient in a child process (as `npm start` runs it, from the TypeScript sources). */
export function spawnAmbient(env: NodeJS.ProcessEnv): {
  child: ChildProcess;
  ready: Promise<void>;
  output: () => string;
  /**
   * Everything it printed, once it exited and its output was read to the end ('exit' may come
   * before the last chunk): for a process that ends by itself, which leaves no child holding
   * its output open.
   */
  finalOutput: () => Promise<string>;
} {
  const child = spawn(process.execPath, ['-r', TS_REGISTER, 'src/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const ready = new Promise<void>((resolvePromise, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      // main.ts logs its roles once start-up (migrations, bootstrap key, listen) is complete
      // (a JSON line when stdout is not a terminal, unless AMBIENT_LOG_FORMAT=pretty).
      if (/\[Ambient\].*roles |"context":"Ambient".*"msg":"roles /.test(output)) {
        clearTimeout(stuck);
        resolvePromise();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`ambient exited with ${code}: ${output}`)));
    const stuck = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ambient not started within ${READY_WITHIN_MS} ms: ${output}`));
    }, READY_WITHIN_MS);
    stuck.unref();
    child.once('exit', () => clearTimeout(stuck));
  });
  const streamsEnded = Promise.all(
    [child.stdout!, child.stderr!].map(
      (stream) => new Promise<void>((resolveEnd) => stream.once('end', resolveEnd)),
    ),
  );
  const finalOutput = async () => {
    await Promise.all([waitForExit(child), streamsEnded]);
    return output;
  };
  return { child, ready, output: () => output, finalOutput };
}

/**
 * The URLs the start-up summary names (JSON or pretty line): `API on http://…/api/v1;`,
 * `ingress on http://…;`.
 */
export function startedUrls(output: string): { apiUrl: string | null; ingressUrl: string | null } {
  const url = (label: string) =>
    new RegExp(`${label} on (http://[^\\s\\x1b";]+)`).exec(output)?.[1] ?? null;
  return { apiUrl: url('API'), ingressUrl: url('ingress') };
}

/** Resolves with the exit code, or with the signal's name when the process died of a signal. */
export function waitForExit(child: ChildProcess): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode ?? child.signalCode);
  }
  return new Promise((resolvePromise) =>
    child.once('exit', (code, signal) => resolvePromise(code ?? signal)),
  );
}
