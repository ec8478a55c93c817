import { fork } from 'node:child_process';
import { join } from 'node:path';
import type { FakeStep } from '../test/fixtures/fake-model-server';
import type { ModelServerOrder, ReceivedRequest } from './model-server-process';

/** The fake model server running in a child process (model-server-process.ts). */
export interface ModelServerProcess {
  /** Base URL ending in /v1. */
  url: string;
  pid: number;
  /** Scripts the runs named `name` follow, sent together. */
  script(scripts: [name: string, steps: FakeStep[]][]): Promise<void>;
  /** Requests whose user messages match `pattern` (and name no script) follow `steps`. */
  scriptPrompt(pattern: RegExp, steps: FakeStep[]): Promise<void>;
  /** The requests received so far of the scripts whose names start with `prefix`. */
  requests(prefix?: string): Promise<ReceivedRequest[]>;
  /** The request of `script`'s `step` (0: the first), once it arrived; throws after `timeoutMs`. */
  awaitRequest(script: string, step: number, timeoutMs: number): Promise<ReceivedRequest>;
  /** The process's CPU time so far (µs, as process.cpuUsage). */
  cpu(): Promise<NodeJS.CpuUsage>;
  close(): void;
}

/** An order without its id (Omit on each member of the union, not on the union). */
type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type Order = WithoutId<ModelServerOrder>;

export async function startModelServerProcess(): Promise<ModelServerProcess> {
  const child = fork(join(__dirname, 'model-server-process.ts'), [], {
    execArgv: ['-r', '@swc-node/register'],
    env: { ...process.env, SWCRC: 'true' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve(m.url));
    child.once('exit', (code) => reject(new Error(`the model server exited (${code})`)));
  });
  let nextId = 0;
  const waiting = new Map<number, (answer: unknown) => void>();
  child.on('message', (m: { id?: number; answer?: unknown }) => {
    if (m.id === undefined) return;
    waiting.get(m.id)?.(m.answer);
    waiting.delete(m.id);
  });
  const ask = <T>(order: Order): Promise<T> =>
    new Promise<T>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve as (answer: unknown) => void);
      child.send({ ...order, id });
    });
  return {
    url,
    pid: child.pid!,
    script: (scripts) => ask({ op: 'script', scripts }),
    scriptPrompt: (pattern, steps) => ask({ op: 'scriptPrompt', pattern: pattern.source, steps }),
    requests: (prefix = '') => ask({ op: 'requests', prefix }),
    awaitRequest: async (script, step, timeoutMs) => {
      const found = await ask<ReceivedRequest | null>({
        op: 'awaitRequest',
        script,
        step,
        timeoutMs,
      });
      if (!found)
        throw new Error(`no model request of ${script}'s step ${step} in ${timeoutMs} ms`);
      return found;
    },
    cpu: () => ask({ op: 'cpu' }),
    close: () => child.disconnect(),
  };
}
