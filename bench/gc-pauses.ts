import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { percentile } from './stats';

/**
 * The bench process's garbage-collection pauses while a phase runs: scavenges (young generation)
 * and the rest. On a host where a scavenge is slow, they are what an open-loop p99 is made of.
 */
export function watchGcPauses(): () => string {
  const scavenges: number[] = [];
  const others: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { kind } = (entry as PerformanceEntry & { detail: { kind: number } }).detail;
      (kind === constants.NODE_PERFORMANCE_GC_MINOR ? scavenges : others).push(entry.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    const describe = (pauses: number[]) =>
      pauses.length === 0
        ? 'none'
        : `${pauses.length}, p50 ${percentile(pauses, 50).toFixed(1)} ms, max ${Math.max(...pauses).toFixed(1)} ms`;
    return `scavenges ${describe(scavenges)}; other collections ${describe(others)}`;
  };
}
