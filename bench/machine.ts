import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, release } from 'node:os';

/**
 * What a bench's figures depend on besides the code: the CPU, how many cores, the kernel and the
 * cgroup version (the sandboxes' limits and the daemons' bookkeeping differ), and how loaded the
 * machine was. Printed with every bench's results, so that figures from two machines can be
 * compared, or found not comparable.
 */
export function machineFacts(): string[] {
  return [
    `date: ${new Date().toISOString()}`,
    `cpu: ${availableParallelism()} × ${cpus()[0]?.model ?? 'unknown'}`,
    `kernel: ${release()}, cgroup ${cgroupVersion()}, node ${process.versions.node}`,
    `load average: ${loadAverage()}${machineProduct()}`,
  ];
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
    if (product) return ` (machine: ${product})`;
  } catch {
    // Not exposed here.
  }
  return '';
}
