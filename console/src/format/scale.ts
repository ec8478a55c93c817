/**
 * A chart's value axis: a top at a round number at or above `max` and the ticks from 0 to it, a
 * step of 1, 2 or 5 × a power of ten, about `count` steps ("$0, $0.005, $0.01, $0.015").
 */
export function niceScale(max: number, count = 4): { top: number; ticks: number[] } {
  if (!(max > 0) || !Number.isFinite(max)) return { top: 0, ticks: [0] };
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
  const steps = Math.ceil(max / step - 1e-9);
  // Rounded to the step's decimals: 3 × 0.1 is 0.30000000000000004 in floating point.
  const decimals = Math.max(0, -Math.floor(Math.log10(step)));
  const ticks = Array.from({ length: steps + 1 }, (_, i) => Number((i * step).toFixed(decimals)));
  return { top: ticks[ticks.length - 1], ticks };
}

/** Which of `n` bars get a label under them: at most `most`, evenly spaced, the first always. */
export function labelledIndexes(n: number, most = 6): number[] {
  if (n <= 0) return [];
  const every = Math.max(1, Math.ceil(n / most));
  return Array.from({ length: n }, (_, i) => i).filter((i) => i % every === 0);
}

/** "Mar 3" for a YYYY-MM-DD UTC day. */
export function shortDay(day: string): string {
  return new Date(`${day}T00:00:00Z`).toLocaleDateString('en-US', {
    month: 'short',
    day: 'numeric',
    timeZone: 'UTC',
  });
}
