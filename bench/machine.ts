import { createConnection } from 'mysql2/promise';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { preparesInChild } from '../src/modules/workers/sandbox/off-loop-spawn';
import { percentile } from './stats';

/**
 * What a bench's figures depend on besides the code: the CPU, how many cores, the kernel and the
 * cgroup version (the sandboxes' limits and the daemons' bookkeeping differ), whether it is a
 * virtual machine or a container (a guest pays more per page fault and exec), how loaded the
 * machine was, and what starting a process costs here, measured now (the sandboxes' costs are
 * mostly process starts). Printed with every bench's results, so that figures from two machines
 * can be compared, or found not comparable.
 */
export function machineFacts(): string[] {
  return [
    `date: ${new Date().toISOString()}`,
    `cpu: ${availableParallelism()} × ${cpus()[0]?.model ?? 'unknown'}`,
    `kernel: ${release()}, cgroup ${cgroupVersion()}, node ${process.versions.node}`,
    `virtualisation: ${virtualisation()}${machineProduct()}`,
    `load average: ${loadAverage()}`,
    `process start (spawn and wait, p50 of ${PROCESS_STARTS}): ${processStartCost()}`,
    `process cost (CPU, bench/process-cost.c): ${processCpuCost()}`,
    `sandbox spawn helper: ${preparesInChild() ? 'compiled (native/build/ambient-spawner)' : 'node (AMBIENT_PROCESS_SPAWNER=node, or not built)'}`,
  ];
}

/**
 * The database server's line: its version and the two settings a write-heavy bench's figures
 * depend on most (a buffer pool smaller than what the bench writes makes InnoDB flush pages while
 * it runs; `innodb_flush_log_at_trx_commit` 1 syncs the log at every commit).
 */
export async function databaseFacts(url: string): Promise<string> {
  const connection = await createConnection(url);
  try {
    const [rows] = await connection.query(
      'SELECT VERSION() AS version, @@innodb_buffer_pool_size AS pool, @@innodb_flush_log_at_trx_commit AS flush',
    );
    const { version, pool, flush } = (
      rows as { version: string; pool: string; flush: string }[]
    )[0];
    const poolMiB = Math.round(Number(pool) / 2 ** 20);
    return `database: ${version} (innodb_buffer_pool_size ${poolMiB} MiB, innodb_flush_log_at_trx_commit ${flush})`;
  } finally {
    await connection.end();
  }
}

const PROCESS_STARTS = 20;

/**
 * p50 wall time of starting `/bin/true` and of a bare `node -e 0` and waiting for their ends,
 * measured here and now: what a fork and an exec cost on this machine under its current load.
 */
function processStartCost(): string {
  const timed = (file: string, args: string[], times: number): number => {
    const samples: number[] = [];
    for (let i = 0; i < times; i++) {
      const t0 = performance.now();
      const r = spawnSync(file, args, { stdio: 'ignore', env: {} });
      if (r.error) return NaN;
      samples.push(performance.now() - t0);
    }
    return percentile(samples, 50);
  };
  const trueMs = timed('/bin/true', [], PROCESS_STARTS);
  const nodeMs = timed(process.execPath, ['-e', '0'], 5);
  return `/bin/true ${trueMs.toFixed(1)} ms, node -e 0 ${nodeMs.toFixed(0)} ms (p50 of 5)`;
}

/**
 * The CPU a fork and an exec cost here, and a page fault's trap (bench/process-cost.c, compiled
 * now with the host's C compiler into a directory removed afterwards): unlike the wall times above,
 * these are what each process a sandbox makes adds to a run's CPU, whatever the machine's load.
 */
function processCpuCost(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ambient-bench-cost-'));
  try {
    const probe = join(dir, 'process-cost');
    const source = join(__dirname, 'process-cost.c');
    const compilers = [process.env.CC, 'cc', 'gcc', 'clang'].filter((cc): cc is string => !!cc);
    const built = compilers.some((cc) =>
      [['-static'], []].some(
        (flags) => spawnSync(cc, ['-O2', ...flags, '-o', probe, source]).status === 0,
      ),
    );
    if (!built) return `not measured (no C compiler of ${compilers.join(', ')} built it)`;
    const run = spawnSync(probe, [], { encoding: 'utf8' });
    const [forkMs, execMs, touchUs, faultUs] = run.stdout.trim().split(' ').map(Number);
    if (run.status !== 0 || !(forkMs >= 0))
      return `not measured (${run.stderr.trim() || run.status})`;
    const fault =
      faultUs >= 0
        ? `${faultUs.toFixed(1)} µs of it its fault's trap`
        : 'the fault alone not separable here';
    return `a small static program's fork and exit ${forkMs.toFixed(2)} ms, with an exec of a static no-op ${execMs.toFixed(2)} ms; a page's first touch ${touchUs.toFixed(1)} µs, ${fault}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The hypervisor or container the bench runs in, as far as the machine tells: the CPU's
 * `hypervisor` flag, /sys/hypervisor, the firmware's vendor, a container's marks.
 */
function virtualisation(): string {
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return '';
    }
  };
  const found: string[] = [];
  const flags = /^flags\s*:(.*)$/m.exec(read('/proc/cpuinfo'))?.[1].split(/\s+/) ?? [];
  if (flags.includes('hypervisor')) found.push('guest (cpu flag hypervisor)');
  const type = read('/sys/hypervisor/type');
  if (type) found.push(`hypervisor ${type}`);
  const vendor = read('/sys/class/dmi/id/sys_vendor');
  if (vendor) found.push(`vendor ${vendor}`);
  if (existsSync('/.dockerenv') || existsSync('/run/.containerenv')) found.push('in a container');
  const init = read('/proc/1/comm');
  if (init) found.push(`pid 1: ${init}`);
  return found.length ? found.join(', ') : 'none seen (bare metal?)';
}

/** The 1, 5 and 15 minute load averages, for a line printed at a bench's end. */
export function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

function cgroupVersion(): string {
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return 'v2';
  return existsSync('/sys/fs/cgroup/memory') ? 'v1' : 'none';
}

/** The machine's product name where the firmware gives one (a cloud VM's type, for example). */
function machineProduct(): string {
  try {
    const product = readFileSync('/sys/class/dmi/id/product_name', 'utf8').trim();
    if (product) return `, machine: ${product}`;
  } catch {
    // Not exposed here.
  }
  return '';
}
