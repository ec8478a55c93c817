import { REPO_ROOT } from './test-app';
import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { TEST_API_KEY } from './test-app';
import { apiClient } from './api-client';
import { createWorkerCredential } from './raw-worker-client';
import { TS_REGISTER } from './ts-register-path';
import { waitForExit } from './worker-process';

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
    ['-r', TS_REGISTER, 'src/self-hosted-worker/main.ts', ...args],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        // Like Ambient's own workers in the tests: bubblewrap, with the fixtures visible.
        AMBIENT_SANDBOX: 'bubblewrap',
        AMBIENT_SANDBOX_READONLY_PATHS: REPO_ROOT,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    notify();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    notify();
  });
  // Done printing: exited, and its output read to the end ('exit' may come before the last chunk).
  let streamsOpen = 2;
  const donePrinting = () =>
    streamsOpen === 0 && (child.exitCode !== null || child.signalCode !== null);
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.once('end', () => {
      streamsOpen -= 1;
      notify();
    });
  }
  child.once('exit', notify);
  const waitForOutput = (pattern: RegExp, timeoutMs = 20_000) =>
    new Promise<string>((resolvePromise, reject) => {
      const check = () => {
        const match = pattern.exec(output);
        if (match) {
          stop();
          resolvePromise(match[0]);
        } else if (donePrinting()) {
          stop();
          reject(new Error(`worker exited before printing ${pattern}:\n${output}`));
        }
      };
      const timer = setTimeout(() => {
        stop();
        reject(new Error(`worker did not print ${pattern} within ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      const stop = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return { child, output: () => output, waitForOutput };
}

export interface ConnectedWorkerOptions {
  apiUrl: string;
  workerId: string;
  workspaceRoot: string;
  modelsFile: string;
  /** More command-line arguments, e.g. `--max-concurrent-tasks 1`. */
  extra?: string[];
  /** Environment variables of the worker process. */
  vars?: NodeJS.ProcessEnv;
}

/** The worker processes one test file starts, each awaited until connected; `killAll` in afterAll. */
export class SelfHostedWorkers {
  /** In start order. */
  readonly processes: WorkerProcess[] = [];

  /** Starts a worker registered with a worker credential the team's admin key makes for it. */
  async start(options: ConnectedWorkerOptions): Promise<WorkerProcess> {
    const admin = apiClient(options.apiUrl, TEST_API_KEY);
    const { credential } = await createWorkerCredential(admin, options.workerId);
    const worker = spawnSelfHostedWorker(
      [
        ...['--api-url', options.apiUrl, '--worker-id', options.workerId],
        ...['--worker-credential', credential, '--workspace-root', options.workspaceRoot],
        ...['--models-file', options.modelsFile, ...(options.extra ?? [])],
      ],
      options.vars,
    );
    this.processes.push(worker);
    // The worker compiles its TypeScript at start (ts-register.js): on a loaded 2-core machine
    // that alone took 15 s, so its first connection gets more than the default 20 s.
    await worker.waitForOutput(/connected to ws:\/\//, 45_000);
    return worker;
  }

  async killAll(): Promise<void> {
    for (const worker of this.processes) {
      worker.child.kill('SIGKILL');
      await waitForExit(worker.child);
    }
  }
}
