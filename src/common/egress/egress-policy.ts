/**
 * The contract between an environment's network settings and the per-execution egress proxy.
 * Environments store `network` and `egress_allow`; the run's executor turns them, with the run's
 * host-bound secrets, into an EgressPolicy; the proxy enforces it.
 */

/**
 * An execution's network mode: `none` (no network), `egress` (every host, through the proxy, the
 * EgressGuard applied) or `allowlist` (only the hosts `egress_allow` lists, through the proxy).
 */
export const NETWORK_MODES = ['none', 'egress', 'allowlist'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

/**
 * One entry of `egress_allow` as stored and returned by the API: `"host"`, `"host:port"`,
 * `"*.suffix"` (ports 443 and 80 when none is given), or an object limiting the HTTP methods.
 */
export type EgressRuleInput = string | { host: string; methods?: string[] };

/** A parsed rule, as the proxy matches it. */
export interface EgressRule {
  /** Lower case, no trailing dot; for a wildcard the suffix without `*.` (`example.com`). */
  host: string;
  /** `*.suffix`: any name below the suffix (not the suffix itself). */
  wildcard: boolean;
  /** Null: 443 and 80. */
  port: number | null;
  /** Upper case; null: every method. A method rule needs interception to be enforced on HTTPS. */
  methods: string[] | null;
  /** The rule as written, named in decisions and 403 bodies. */
  source: string;
}

/**
 * A secret bound to hosts: inside the sandbox its variable holds `placeholder`; the proxy puts
 * `value` in its place in the headers (and URL userinfo) of requests to `hosts` only.
 */
export interface BoundSecret {
  name: string;
  placeholder: string;
  value: string;
  /** The hosts it may reach, in the rule syntax of EgressRuleInput strings (no methods). */
  hosts: string[];
}

/** What one execution's proxy enforces. */
export interface EgressPolicy {
  mode: Exclude<NetworkMode, 'none'>;
  /** Allowlist mode's rules; ignored in egress mode (every host, the guard still applied). */
  rules: EgressRule[];
  secrets: BoundSecret[];
}

/** One request the proxy decided on. */
export interface EgressDecision {
  host: string;
  port: number;
  /** The HTTP method where the proxy saw it (plain HTTP, intercepted HTTPS); null for a tunnel. */
  method: string | null;
  allowed: boolean;
  /** The rule that allowed it (its source), or why it was refused, with the rule to add. */
  reason: string;
  /**
   * Refused because no allowlist rule names the host at all (not a method, not the guard): what
   * an `{"egress": "unlisted", "effect": "ask"}` approval rule asks a person about.
   */
  unlisted?: true;
}

/** Where a sandbox's programs find the proxy: the forwarder's port on the sandbox's loopback. */
export const SANDBOX_PROXY_HOST = '127.0.0.1';
export const SANDBOX_PROXY_PORT = 7172;
/** The proxy's socket in the sandbox's private directory (beside the API bridge's api.sock). */
export const PROXY_SOCKET_NAME = 'egress.sock';
