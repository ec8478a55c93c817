import { Logger } from '@nestjs/common';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BubblewrapSandboxBackend } from '../src/modules/workers/sandbox/backends/bubblewrap/bubblewrap-sandbox';
import { ProcessSandboxBackend } from '../src/modules/workers/sandbox/backends/process/process-sandbox';
import { lingeringRemovalsSettled } from '../src/modules/workers/sandbox/cgroup-limits';
import type { Sandbox, SandboxBackend } from '../src/modules/workers/sandbox/sandbox.types';
import { settlesWithin } from '../src/common/time';
import { closeOnExit } from './closing';
import { CpuSplit, describeCpuSplit, watchCpuSplit } from './cpu-split';
import { loadAverage, machineFacts } from './machine';
import { ms, percentile, table } from './stats';

/**
 * `npm run bench:sandbox-phases`: where the time of one sandboxed run goes, without Ambient
 * around it: per backend (PHASES_BACKENDS, default process,bubblewrap; `bubblewrap-forwarder-holder`
 * holds each execution's network namespace with the forwarder on the host, as before the
 * sandbox's spawn helper started it inside; `bubblewrap-bwrap-holder` with a bwrap around it;
 * `bubblewrap-bwrap-commands` starts a bwrap per command, as before the spawn helper inside the
 * sandbox; `bubblewrap-bwrap-maker` has bwrap make each execution's sandbox instead of the
 * spawner's `--confine`), PHASES_RUNS (default 30) sequential rounds of open (cgroup, private files, API bridge,
 * the forwarder's namespace, the sandbox's spawn helper) → PHASES_COMMANDS (default 1) commands
 * one after another as run_command starts them (`bash -c 'echo hi'`) → close. Timed per phase (p50 / p95 wall), and the
 * CPU of all rounds split into user and system time of this process, its children (the spawn
 * helpers with every sandbox process they reaped) per round; a round whose command fails is
 * counted (and its first lines shown), not retried. Bounded: a fixed number of rounds.
 */

const ROUNDS = Number(process.env.PHASES_RUNS ?? 30);
const WARM_UP = 3;
const BACKENDS = (process.env.PHASES_BACKENDS ?? 'process,bubblewrap').split(',');
const COMMANDS = Number(process.env.PHASES_COMMANDS ?? 1);
/**
 * How long the bench's end waits for the run cgroups a close left to the background (their
 * removal tries for 30 s), below closeOnExit's bound of 60 s.
 */
const REMOVALS_WAIT_MS = 35_000;
/** The round's sandbox while it is open: what a bench that fails or is interrupted closes. */
let openSandbox: Sandbox | null = null;

interface Phases {
  openMs: number[];
  commandMs: number[];
  closeMs: number[];
  /** Rounds whose command failed (exit and output, first 3). */
  failures: string[];
  /** The service's CPU (ms, user + system) in open, command and close, summed over the rounds. */
  serviceCpuMs: [number, number, number];
  cpu: CpuSplit | null;
}

async function round(backend: SandboxBackend, root: string, i: number, apiUrl: string) {
  const workspaceDir = join(root, 'ws', String(i));
  await mkdir(workspaceDir, { recursive: true });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const sandbox: Sandbox = await backend.open({
    runId: `phases${i}`,
    executionId: 1,
    teamId: 'bench',
    workspaceDir,
    image: null,
    network: 'none',
    limits: { memoryMb: 512, pids: 128, cpus: 1 },
    apiUrl,
  });
  openSandbox = sandbox;
  const t1 = performance.now();
  const c1 = process.cpuUsage();
  let failure: string | null = null;
  for (let n = 0; n < COMMANDS; n++) {
    const proc = sandbox.spawn('/bin/bash', ['-c', 'exec 2>&1\necho hi'], {
      env: { PATH: sandbox.path, HOME: sandbox.workdir },
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exit = await proc.exited;
    if (exit.code !== 0 || out.trim() !== 'hi') failure ??= `${JSON.stringify(exit)} ${out}`;
  }
  const t2 = performance.now();
  const c2 = process.cpuUsage();
  await sandbox.close();
  openSandbox = null;
  const t3 = performance.now();
  const c3 = process.cpuUsage();
  const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) =>
    (b.user - a.user + b.system - a.system) / 1000;
  return {
    failure,
    openMs: t1 - t0,
    commandMs: t2 - t1,
    closeMs: t3 - t2,
    serviceCpuMs: [cpuMs(c0, c1), cpuMs(c1, c2), cpuMs(c2, c3)],
  };
}

/** What holds a bubblewrap execution's network namespace in the variant `name`. */
function holderOf(name: string): 'sandbox' | 'forwarder' | 'bwrap' {
  if (name === 'bubblewrap-bwrap-holder') return 'bwrap';
  return name === 'bubblewrap-forwarder-holder' ? 'forwarder' : 'sandbox';
}

async function measure(name: string, apiUrl: string): Promise<Phases> {
  const root = await mkdtemp(join(tmpdir(), 'ambient-phases-'));
  const backend: SandboxBackend = name.startsWith('bubblewrap')
    ? new BubblewrapSandboxBackend({
        readonlyPaths: [],
        privateRoot: join(root, '.sandbox'),
        holder: holderOf(name),
        commands: name === 'bubblewrap-bwrap-commands' ? 'bwrap' : 'spawner',
        maker: name === 'bubblewrap-bwrap-maker' ? 'bwrap' : 'spawner',
      })
    : new ProcessSandboxBackend();
  const close = async () => {
    try {
      await openSandbox?.close();
      openSandbox = null;
      if (!(await settlesWithin(lingeringRemovalsSettled(), REMOVALS_WAIT_MS))) {
        process.stderr.write(`[bench] ${name}: stopped waiting for run cgroups being removed\n`);
      }
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  };
  const release = closeOnExit(close);
  try {
    for (let i = 0; i < WARM_UP; i++) await round(backend, root, i, apiUrl);
    const phases: Phases = {
      openMs: [],
      commandMs: [],
      closeMs: [],
      failures: [],
      serviceCpuMs: [0, 0, 0],
      cpu: null,
    };
    const cpu = watchCpuSplit();
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round(backend, root, WARM_UP + i, apiUrl);
      phases.openMs.push(r.openMs);
      phases.commandMs.push(r.commandMs);
      phases.closeMs.push(r.closeMs);
      if (r.failure) phases.failures.push(r.failure);
      r.serviceCpuMs.forEach((used, phase) => (phases.serviceCpuMs[phase] += used));
    }
    phases.cpu = cpu();
    return phases;
  } finally {
    release();
    await close();
  }
}

async function main(): Promise<void> {
  Logger.overrideLogger(['warn', 'error']);
  const facts = await machineFacts();
  // The API the sandboxes' bridge points at (never called: the command does not use it).
  const api = createServer((_, res) => res.end('{}'));
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}/api`;
  const results: [string, Phases][] = [];
  try {
    for (const name of BACKENDS) {
      process.stderr.write(`[bench] ${name}: ${ROUNDS} rounds\n`);
      results.push([name, await measure(name, apiUrl)]);
    }
  } finally {
    api.close();
  }
  const p = (values: number[]) => `${ms(percentile(values, 50))} / ${ms(percentile(values, 95))}`;
  const rows = [
    [
      'Backend',
      'open p50 / p95',
      `${COMMANDS === 1 ? 'command' : `${COMMANDS} commands`} p50 / p95`,
      'close p50 / p95',
      'service CPU per round: open / command / close',
      'commands failed',
    ],
  ];
  for (const [name, r] of results) {
    const cpu = r.serviceCpuMs.map((used) => ms(used / ROUNDS)).join(' / ');
    rows.push([name, p(r.openMs), p(r.commandMs), p(r.closeMs), cpu, `${r.failures.length}`]);
  }
  process.stdout.write(
    [
      '',
      'Ambient sandbox phases benchmark',
      ...facts,
      `load average at end: ${loadAverage()}`,
      `${ROUNDS} sequential rounds per backend (after ${WARM_UP} warm-up): open, ${COMMANDS} command(s) one after another (bash -c 'echo hi'), close`,
      '',
      table(rows),
      '',
      ...results.map(([name, r]) => `${name}: ${describeCpuSplit(r.cpu, ROUNDS, 'round')}`),
      ...results.flatMap(([name, r]) =>
        r.failures.slice(0, 3).map((f) => `${name}: a command failed: ${f.trim()}`),
      ),
      '',
    ].join('\n'),
  );
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`bench:sandbox-phases failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  },
);
