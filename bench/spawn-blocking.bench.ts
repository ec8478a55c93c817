import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { spawnOffLoop } from '../src/modules/workers/sandbox/off-loop-spawn';
import { machineFacts } from './machine';
import { ms } from './stats';

/**
 * `node -r @swc-node/register bench/spawn-blocking.bench.ts`: how long starting N processes at once
 * (`sh -c 'echo hi'`, what a command of the process backend is) holds the event loop, with
 * child_process.spawn on the event loop (before) and with spawnOffLoop (sandboxes now).
 */
const N = Number(process.env.SPAWNS ?? 100);

async function measure(label: string, start: () => Promise<void>): Promise<string> {
  // A 1 ms ticker: the longest gap between two ticks is the longest the loop was held.
  const gaps: number[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 1);
  const began = performance.now();
  await start();
  const wall = performance.now() - began;
  clearInterval(ticker);
  const held = gaps.filter((g) => g > 20).reduce((a, b) => a + b, 0);
  return `${label}: ${N} processes ended in ${ms(wall)}; longest loop gap ${ms(Math.max(...gaps))}, time in gaps > 20 ms ${ms(held)}`;
}

async function main(): Promise<void> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  // Warm the spawner threads.
  await spawnOffLoop('/bin/true', [], { cwd: '/', env, stdin: 'ignore' }).exited;
  const lines = machineFacts();
  for (let round = 0; round < 2; round++) {
    lines.push(
      await measure('child_process.spawn on the event loop', async () => {
        // Started from a timer, as executions start them: the loop is running when they block it.
        await new Promise((resolve) => setTimeout(resolve, 5));
        await Promise.all(
          Array.from({ length: N }, () => {
            const child = spawn('/bin/sh', ['-c', 'echo hi'], { env, detached: true });
            child.stdout.resume();
            return new Promise((resolve) => child.on('exit', resolve));
          }),
        );
      }),
    );
    lines.push(
      await measure('spawnOffLoop', async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        await Promise.all(
          Array.from({ length: N }, () => {
            const proc = spawnOffLoop('/bin/sh', ['-c', 'echo hi'], {
              cwd: '/',
              env,
              stdin: 'ignore',
            });
            proc.stdout.resume();
            return proc.exited;
          }),
        );
      }),
    );
  }
  lines.push(
    `load average at end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
