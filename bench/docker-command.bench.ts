import Dockerode from 'dockerode';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerSandboxBackend } from '../src/modules/workers/sandbox/backends/docker/docker-sandbox';
import { SANDBOX_PATH, type Sandbox } from '../src/modules/workers/sandbox/sandbox.types';
import { closeOnExit } from './closing';
import { loadAverage, machineFacts } from './machine';
import { ms, percentile, table } from './stats';
import { dockerSandboxSettings } from '../test/support/docker-sandbox';

/**
 * `node -r @swc-node/register bench/docker-command.bench.ts`: one command (`echo hi`) in a
 * running container, spawn → exit, through the launcher and through `docker exec`, alternating
 * (one sandbox each, the same image and limits), so both see the same host load; then 20 at once
 * in each. The command alone: no API, no model, no hand-out.
 */
const ROUNDS = 40;
const CONCURRENT = 20;

async function timed(sandbox: Sandbox): Promise<number> {
  const started = performance.now();
  const child = sandbox.spawn('echo', ['hi'], { env: { PATH: SANDBOX_PATH } });
  child.stdout.resume();
  child.stderr.resume();
  const exit = await child.exited;
  if (exit.code !== 0) throw new Error(`echo ended with ${JSON.stringify(exit)}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const docker = new Dockerode();
  const base = await mkdtemp(join(tmpdir(), 'ambient-command-bench-'));
  const facts = machineFacts();
  const ways: Array<{ label: string; sandbox: Sandbox; times: number[]; burstMs: number }> = [];
  const backends: DockerSandboxBackend[] = [];
  // A sandbox's close leaves its container's removal to the backend's queue: drained here.
  const close = async () => {
    await Promise.all(ways.map((way) => way.sandbox.close()));
    await Promise.all(backends.map((backend) => backend.drain()));
    await rm(base, { recursive: true, force: true });
  };
  const release = closeOnExit(close);
  try {
    for (const [label, launcher] of [
      ['docker exec', false],
      ['launcher', true],
    ] as const) {
      const workspace = join(base, label.replace(/\W/g, '-'));
      await mkdir(workspace, { recursive: true });
      const backend = new DockerSandboxBackend(dockerSandboxSettings({ launcher }), docker);
      backends.push(backend);
      const sandbox = await backend.open({
        runId: `command-bench-${process.pid}-${ways.length}`,
        executionId: 1,
        teamId: 'bench',
        workspaceDir: workspace,
        image: null,
        network: 'none',
        limits: { memoryMb: 256, pids: 128, cpus: 1 },
        apiUrl: null,
      });
      // Closed at the end from here on, even if its first (untimed) command fails.
      ways.push({ label, sandbox, times: [], burstMs: 0 });
      await timed(sandbox);
    }
    for (let i = 0; i < ROUNDS; i++) {
      for (const way of ways) way.times.push(await timed(way.sandbox));
    }
    for (const way of ways) {
      const started = performance.now();
      await Promise.all(Array.from({ length: CONCURRENT }, () => timed(way.sandbox)));
      way.burstMs = performance.now() - started;
    }
  } finally {
    release();
    await close();
  }
  facts.push(`load average at end: ${loadAverage()}`);
  const rows = [
    ['command', 'spawn→exit p50 / p90 / max', `${CONCURRENT} at once: all ended`],
    ...ways.map((way) => [
      way.label,
      `${ms(percentile(way.times, 50))} / ${ms(percentile(way.times, 90))} / ${ms(Math.max(...way.times))}`,
      ms(way.burstMs),
    ]),
  ];
  process.stdout.write(
    ['', ...facts, `${ROUNDS} rounds, alternating`, '', table(rows), ''].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`docker-command bench failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
