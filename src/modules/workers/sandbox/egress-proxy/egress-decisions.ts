import type {
  EgressDecision,
  EgressPolicy,
  EgressRule,
} from '../../../../common/egress/egress-policy';
import { matchEgressRule, normalizeHost } from '../../../../common/egress/egress-rules';

/** The policy's verdict on one request before the guard looks at addresses. */
export type PolicyVerdict =
  | { allowed: true; reason: string }
  /** `unlisted`: no rule names the host (as opposed to a method a rule leaves out). */
  | { allowed: false; reason: string; unlisted?: true };

/** The header every refusal of the proxy carries, so a client can tell it from the origin's 403. */
export const EGRESS_HEADER = 'X-Ambient-Egress';

/**
 * Step (a) of the proxy's decision: in allowlist mode the host, port and (when the proxy sees
 * it) method must match a rule; in egress mode every host passes and only the guard decides.
 */
export function policyVerdict(
  policy: EgressPolicy,
  host: string,
  port: number,
  method: string | null,
): PolicyVerdict {
  if (policy.mode === 'egress') return { allowed: true, reason: 'network: egress' };
  const match = matchEgressRule(policy.rules, host, port, method);
  if (match) return { allowed: true, reason: match.rule.source };
  const hostOnly = method === null ? null : matchEgressRule(policy.rules, host, port, null);
  if (hostOnly)
    return { allowed: false, reason: methodRefusal(hostOnly.rule, host, port, method!) };
  return {
    allowed: false,
    unlisted: true,
    reason:
      `egress refused: ${hostPort(host, port)} is not in this environment's egress_allow; ` +
      `add "${ruleToAdd(host, port)}" to allow it`,
  };
}

function methodRefusal(rule: EgressRule, host: string, port: number, method: string): string {
  return (
    `egress refused: ${method} to ${hostPort(host, port)} is not among the methods of the ` +
    `egress_allow rule "${rule.source}"; add "${method}" to its methods to allow it`
  );
}

/** `host:port` as a URL writes it (IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  const name = normalizeHost(host);
  return `${name.includes(':') ? `[${name}]` : name}:${port}`;
}

/** The egress_allow string that would let `host:port` through (no port for 443 and 80). */
function ruleToAdd(host: string, port: number): string {
  if (port === 443 || port === 80) {
    const name = normalizeHost(host);
    return name.includes(':') ? `[${name}]` : name;
  }
  return hostPort(host, port);
}

interface DeniedCount {
  host: string;
  port: number;
  method: string | null;
  reason: string;
  count: number;
}

/** Every decision of one proxy, repeats folded per host:port (and method and reason when denied). */
export class DecisionTally {
  private readonly allowed = new Map<string, { host: string; port: number; count: number }>();
  private readonly denied = new Map<string, DeniedCount>();

  add(decision: EgressDecision): void {
    const { host, port, method, reason } = decision;
    if (decision.allowed) {
      const key = `${host}\0${port}`;
      const entry = this.allowed.get(key) ?? { host, port, count: 0 };
      entry.count++;
      this.allowed.set(key, entry);
      return;
    }
    const key = `${host}\0${port}\0${method ?? ''}\0${reason}`;
    const entry = this.denied.get(key) ?? { host, port, method, reason, count: 0 };
    entry.count++;
    this.denied.set(key, entry);
  }

  snapshot(): {
    allowed: { host: string; port: number; count: number }[];
    denied: DeniedCount[];
  } {
    return {
      allowed: [...this.allowed.values()].map((entry) => ({ ...entry })),
      denied: [...this.denied.values()].map((entry) => ({ ...entry })),
    };
  }
}
