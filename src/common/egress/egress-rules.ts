import { isIPv4 } from 'node:net';
import type { BoundSecret, EgressRule } from './egress-policy';
import { formatIp, parseIp } from './ip-address';

/** The most rules one `egress_allow` (or one secret's `inject_hosts`) may list. */
export const MAX_EGRESS_RULES = 200;

/** The methods a rule may limit a host to (CONNECT has no meaning inside an intercepted host). */
export const EGRESS_RULE_METHODS = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
] as const;

const RULE_KEYS = ['host', 'methods'];
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Input that is not a rule list; `field` is the path of the offending value (`egress_allow.2.host`). */
export class EgressRuleError extends Error {
  override readonly name = 'EgressRuleError';

  constructor(
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${field}: ${detail}`);
  }
}

/**
 * The rules of an `egress_allow` list: strings `"host"`, `"host:port"`, `"*.suffix"`,
 * `"*.suffix:port"`, or objects `{"host": "…", "methods": ["GET", "HEAD"]}`. Throws
 * EgressRuleError naming the field of the first value that is none of these.
 */
export function parseEgressRules(input: unknown, field = 'egress_allow'): EgressRule[] {
  return parseList(input, field).map((item, i) => parseRule(item, `${field}.${i}`));
}

/** The host patterns of a secret's `inject_hosts` (the string rule syntax, no methods). */
export function parseHostPatterns(input: unknown, field: string): EgressRule[] {
  return parseList(input, field).map((item, i) => parseHostPattern(item, `${field}.${i}`));
}

/** One host pattern (`"host"`, `"host:port"`, `"*.suffix"`, `"*.suffix:port"`). */
export function parseHostPattern(input: unknown, field: string): EgressRule {
  if (typeof input !== 'string') throw new EgressRuleError(field, 'must be a string');
  const { host, wildcard, port } = parseHostPort(input, field);
  return { host, wildcard, port, methods: null, source: input };
}

function parseList(input: unknown, field: string): unknown[] {
  if (!Array.isArray(input)) throw new EgressRuleError(field, 'must be a list');
  if (input.length > MAX_EGRESS_RULES) {
    throw new EgressRuleError(field, `lists ${input.length} rules; at most ${MAX_EGRESS_RULES}`);
  }
  return input;
}

function parseRule(input: unknown, field: string): EgressRule {
  if (typeof input === 'string') return parseHostPattern(input, field);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new EgressRuleError(field, 'must be a host string or an object with "host"');
  }
  const record = input as Record<string, unknown>;
  const unknownKey = Object.keys(record).find((key) => !RULE_KEYS.includes(key));
  if (unknownKey !== undefined) {
    throw new EgressRuleError(
      field,
      `${JSON.stringify(unknownKey)} is not a rule field (host, methods)`,
    );
  }
  if (record.host === undefined) throw new EgressRuleError(`${field}.host`, 'is required');
  const pattern = parseHostPattern(record.host, `${field}.host`);
  if (record.methods === undefined) return pattern;
  const methods = parseMethods(record.methods, `${field}.methods`);
  return { ...pattern, methods, source: `${pattern.source} (${methods.join(', ')})` };
}

function parseMethods(input: unknown, field: string): string[] {
  if (!Array.isArray(input)) throw new EgressRuleError(field, 'must be a list of HTTP methods');
  if (input.length === 0) throw new EgressRuleError(field, 'must list at least one method');
  const methods = input.map((item, i) => {
    const method = typeof item === 'string' ? item.toUpperCase() : null;
    if (method === null || !(EGRESS_RULE_METHODS as readonly string[]).includes(method)) {
      throw new EgressRuleError(
        `${field}.${i}`,
        `${JSON.stringify(item)} is not an HTTP method (${EGRESS_RULE_METHODS.join(', ')})`,
      );
    }
    return method;
  });
  return [...new Set(methods)];
}

function parseHostPort(
  text: string,
  field: string,
): { host: string; wildcard: boolean; port: number | null } {
  const bracketed = /^\[([^\]]*)\](?::([^:]*))?$/.exec(text);
  if (bracketed) {
    const address = parseIp(bracketed[1]);
    if (!address || address.family !== 6 || bracketed[1].includes('%')) {
      throw new EgressRuleError(field, `${JSON.stringify(text)} is not an IPv6 address`);
    }
    const port = bracketed[2] === undefined ? null : parsePort(bracketed[2], field);
    return { host: formatIp(address), wildcard: false, port };
  }
  const colons = text.split(':').length - 1;
  if (colons > 1) {
    throw new EgressRuleError(field, `${JSON.stringify(text)}: write an IPv6 address in brackets`);
  }
  const [name, portText] = text.split(':');
  const port = portText === undefined ? null : parsePort(portText, field);
  const wildcard = name.startsWith('*.');
  const host = parseHostName(wildcard ? name.slice(2) : name, text, field);
  if (wildcard && (isIPv4(host) || host.split('.').length < 2)) {
    throw new EgressRuleError(
      field,
      `${JSON.stringify(text)} is too broad: a wildcard needs at least two labels after "*."`,
    );
  }
  return { host, wildcard, port };
}

function parseHostName(name: string, text: string, field: string): string {
  const host = name.toLowerCase().replace(/\.$/, '');
  if (isIPv4(host)) return host;
  const labels = host.split('.');
  const valid =
    host.length > 0 &&
    host.length <= 253 &&
    labels.every((label) => LABEL.test(label)) &&
    // An all-digit last label is no top-level domain: a malformed IPv4 address.
    !/^\d+$/.test(labels[labels.length - 1]);
  if (!valid) throw new EgressRuleError(field, `${JSON.stringify(text)} is not a host name`);
  return host;
}

function parsePort(text: string, field: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw new EgressRuleError(field, `port ${JSON.stringify(text)} is not a number 1–65535`);
  }
  return port;
}

/** `host` as a rule names it: lower case, no brackets or trailing dot, IPv6 compressed. */
export function normalizeHost(host: string): string {
  const name = host
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();
  const address = name.includes(':') ? parseIp(name) : null;
  return address ? formatIp(address) : name;
}

/** Whether `rule` names `host` (already normalized) on `port`, whatever the method. */
export function ruleCovers(rule: EgressRule, host: string, port: number): boolean {
  if (rule.port === null ? port !== 443 && port !== 80 : rule.port !== port) return false;
  return rule.wildcard ? host.endsWith(`.${rule.host}`) : host === rule.host;
}

/**
 * The first rule allowing `method` to `host:port`; `method` null (a tunnel the proxy does not
 * open) matches on host and port alone, so check needsInterception before tunnelling.
 */
export function matchEgressRule(
  rules: readonly EgressRule[],
  host: string,
  port: number,
  method: string | null,
): { rule: EgressRule } | null {
  const name = normalizeHost(host);
  const verb = method?.toUpperCase() ?? null;
  const rule = rules.find(
    (candidate) =>
      ruleCovers(candidate, name, port) &&
      (verb === null || candidate.methods === null || candidate.methods.includes(verb)),
  );
  return rule ? { rule } : null;
}

const secretHostRules = new WeakMap<BoundSecret, EgressRule[]>();

/** A bound secret's hosts as rules (parsed once per secret object). */
export function secretHosts(secret: BoundSecret): EgressRule[] {
  let rules = secretHostRules.get(secret);
  if (!rules) {
    rules = parseHostPatterns(secret.hosts, `secrets.${secret.name}.inject_hosts`);
    secretHostRules.set(secret, rules);
  }
  return rules;
}

/** The secrets whose placeholders the proxy replaces in requests to `host:port`. */
export function secretsFor(
  secrets: readonly BoundSecret[],
  host: string,
  port: number,
): BoundSecret[] {
  const name = normalizeHost(host);
  return secrets.filter((secret) => secretHosts(secret).some((r) => ruleCovers(r, name, port)));
}

/**
 * Whether the proxy must terminate TLS to `host:port`: a bound secret goes there, or every rule
 * that names it limits the methods. Pass no rules in egress mode (every host, every method).
 */
export function needsInterception(
  rules: readonly EgressRule[],
  secrets: readonly BoundSecret[],
  host: string,
  port: number,
): boolean {
  if (secretsFor(secrets, host, port).length > 0) return true;
  const name = normalizeHost(host);
  const covering = rules.filter((rule) => ruleCovers(rule, name, port));
  return covering.length > 0 && covering.every((rule) => rule.methods !== null);
}
