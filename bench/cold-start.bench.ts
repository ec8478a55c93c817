import Dockerode from 'dockerode';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DockerSandboxBackend } from '../src/modules/workers/sandbox/backends/docker/docker-sandbox';
import { COLD_STARTS } from '../src/modules/workers/sandbox/backends/docker/cold-start-slots';
import { SANDBOX_PATH, type Sandbox } from '../src/modules/workers/sandbox/sandbox.types';
import {
  AGENT_IMAGE,
  BUILD_AGENT_IMAGE,
  dockerSandboxSettings,
} from '../test/support/docker-sandbox';
import { closeOnExit } from './closing';
import { describeCpuSplit, watchCpuSplit } from './cpu-split';
import { loadAverage, machineFacts } from './machine';
import { ms, percentile, table } from './stats';

/**
 * `node -r @swc-node/register bench/cold-start.bench.ts [count]`: `count` (default 20) docker
 * sandboxes opened at once with no warm pool, each running one command (`true`) as soon as its
 * container is ready: what a burst that finds the pool empty waits. Timed per sandbox from open to
 * the command's exit; the first, median and last say whether the early ones wait behind the
 * later ones. The docker backend alone: no API, no model.
 */
const COUNT = Number(process.argv[2] ?? 20);

async function firstCommand(sandbox: Sandbox): Promise<void> {
  const child = sandbox.spawn('true', [], { env: { PATH: SANDBOX_PATH } });
  child.stdout.resume();
  child.stderr.resume();
  const exit = await child.exited;
  if (exit.code !== 0) throw new Error(`true ended with ${JSON.stringify(exit)}`);
}

async function main(): Promise<void> {
  await promisify(execFile)(BUILD_AGENT_IMAGE, ['--tag', AGENT_IMAGE], { maxBuffer: 16 << 20 });
  const facts = machineFacts();
  const base = await mkdtemp(join(tmpdir(), 'ambient-cold-start-bench-'));
  const backend = new DockerSandboxBackend(dockerSandboxSettings({ poolSize: 0 }), new Dockerode());
  const sandboxes: Sandbox[] = [];
  const close = async () => {
    await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
    await backend.drain();
    await rm(base, { recursive: true, force: true });
  };
  const release = closeOnExit(close);
  let times: number[];
  let wallMs: number;
  let cpu: ReturnType<ReturnType<typeof watchCpuSplit>>;
  try {
    const cpuUsed = watchCpuSplit();
    const started = performance.now();
    // Every open settled before `close`: a failed one leaves none still opening, to be missed.
    const settled = await Promise.allSettled(
      Array.from({ length: COUNT }, async (_, i) => {
        const workspace = join(base, String(i));
        await mkdir(workspace, { recursive: true });
        const opened = performance.now();
        const sandbox = await backend.open({
          runId: `cold-start-bench-${process.pid}-${i}`,
          executionId: 1,
          teamId: 'bench',
          workspaceDir: workspace,
          image: null,
          network: 'none',
          limits: { memoryMb: 256, pids: 128, cpus: 1 },
          apiUrl: null,
        });
        sandboxes.push(sandbox);
        await firstCommand(sandbox);
        return performance.now() - opened;
      }),
    );
    times = settled.map((result) => {
      if (result.status === 'rejected') throw result.reason;
      return result.value;
    });
    wallMs = performance.now() - started;
    cpu = cpuUsed();
  } finally {
    release();
    await close();
  }
  const sorted = [...times].sort((a, b) => a - b);
  process.stdout.write(
    [
      '',
      'Cold container starts (docker, no pool)',
      ...facts,
      `load average at end: ${loadAverage()}`,
      `${COUNT} sandboxes opened at once, ${COLD_STARTS} cold starts at a time; open → first command's exit`,
      '',
      table([
        ['first', 'p50', 'p90', 'last', 'all done'],
        [
          ms(sorted[0]),
          ms(percentile(times, 50)),
          ms(percentile(times, 90)),
          ms(sorted[sorted.length - 1]),
          ms(wallMs),
        ],
      ]),
      '',
      describeCpuSplit(cpu, COUNT, 'sandbox'),
      '',
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`cold-start bench failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
