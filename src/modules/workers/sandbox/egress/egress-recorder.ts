import type { EgressDecision } from '../../../../common/egress/egress-policy';

/** Timeline events of an execution's egress (the run page's Blocked hosts reads the first). */
export const EGRESS_DENIED = 'egress_denied';
export const EGRESS_SUMMARY = 'egress_summary';

type Emit = (eventType: string, payload: Record<string, unknown>) => Promise<void>;

interface DeniedHost {
  host: string;
  port: number;
  method: string | null;
  reason: string;
  count: number;
}

interface AllowedHost {
  host: string;
  port: number;
  count: number;
}

/**
 * What an execution's proxy decided, for its run's timeline and the metrics: the first refusal
 * of a host (host, port, method and reason alike) goes on the timeline at once as
 * `egress_denied` (so a run page shows it while the run goes on); its repeats are only counted,
 * and `finish` puts every count in one `egress_summary`. Each decision is counted in
 * `ambient_egress_requests_total` as it comes.
 */
export class EgressRecorder {
  private readonly allowed = new Map<string, AllowedHost>();
  private readonly denied = new Map<string, DeniedHost>();
  private readonly emitted: Promise<void>[] = [];

  constructor(
    private readonly emit: Emit,
    private readonly count: (decision: 'allowed' | 'denied') => void,
  ) {}

  /** For EgressProxy's onDecision: never throws, never waits. */
  readonly record = (decision: EgressDecision): void => {
    this.count(decision.allowed ? 'allowed' : 'denied');
    const { host, port, method, reason } = decision;
    if (decision.allowed) {
      const key = `${host}:${port}`;
      const seen = this.allowed.get(key);
      if (seen) seen.count++;
      else this.allowed.set(key, { host, port, count: 1 });
      return;
    }
    const key = JSON.stringify([host, port, method, reason]);
    const seen = this.denied.get(key);
    if (seen) {
      seen.count++;
      return;
    }
    this.denied.set(key, { host, port, method, reason, count: 1 });
    this.emitted.push(
      this.emit(EGRESS_DENIED, { host, port, method, reason, count: 1 }).catch(() => undefined),
    );
  };

  /** Once the sandbox is closed: `egress_summary`, when the proxy decided anything at all. */
  async finish(): Promise<void> {
    await Promise.all(this.emitted);
    if (this.allowed.size === 0 && this.denied.size === 0) return;
    await this.emit(EGRESS_SUMMARY, {
      allowed: [...this.allowed.values()],
      denied: [...this.denied.values()],
    }).catch(() => undefined);
  }
}

/**
 * The decisions an `egress_summary` counts, by decision (a self-hosted worker's, whose proxy
 * counted them on its machine); nothing for a payload that is not one.
 */
export function egressSummaryCounts(
  payload: Record<string, unknown> | undefined,
): ['allowed' | 'denied', number][] {
  const total = (list: unknown): number =>
    Array.isArray(list)
      ? list.reduce<number>((sum, item) => {
          const count = (item as { count?: unknown } | null)?.count;
          return (
            sum + (Number.isSafeInteger(count) && (count as number) > 0 ? (count as number) : 0)
          );
        }, 0)
      : 0;
  return [
    ['allowed', total(payload?.allowed)],
    ['denied', total(payload?.denied)],
  ];
}
