import type { EgressDecision } from '../../../common/egress/egress-policy';
import { hostPort } from '../sandbox/egress-proxy/egress-decisions';
import type { EgressTarget } from '../harness/harness.types';

/**
 * The hosts outside the allowlist that an execution's egress proxy refused, collected as the
 * proxy decides (`record` is its onDecision listener: it never throws, never waits) until the
 * harness takes them, each once per execution. Hosts a person already denied for the run are
 * left out, so a model that keeps retrying one is not asked about again.
 */
export class EgressRefusals {
  private readonly seen = new Set<string>();
  private pending: EgressTarget[] = [];

  constructor(private readonly denied: ReadonlySet<string> = new Set()) {}

  readonly record = (decision: EgressDecision): void => {
    if (decision.allowed || !decision.unlisted) return;
    const key = hostPort(decision.host, decision.port);
    if (this.seen.has(key) || this.denied.has(key)) return;
    this.seen.add(key);
    this.pending.push({ host: decision.host, port: decision.port });
  };

  /** The refusals since the last call, oldest first. */
  take(): EgressTarget[] {
    const taken = this.pending;
    this.pending = [];
    return taken;
  }
}
