import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

export interface WorkerProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves once a line matching `pattern` was printed (fails if the process exits first). */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/** Ambient's self-hosted worker program in a child process, as `npm run worker:self-hosted` runs it. */
export function spawnSelfHostedWorker(args: string[], env: NodeJS.ProcessEnv = {}): WorkerProcess {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', 'src/self-hosted-worker/main.ts', ...args],
    {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SWCRC: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  child.once('exit', () => {
    for (const listener of listeners) listener();
  });
  const waitForOutput = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<string>((resolvePromise, reject) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) {
          done();
          resolvePromise(match[0]);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          done();
          reject(new Error(`worker exited before printing ${pattern}:\n${output}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`worker did not print ${pattern} within ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return { child, output: () => output, waitForOutput };
}
