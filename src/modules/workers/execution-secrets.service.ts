import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { BoundSecret } from '../../common/egress/egress-policy';
import { EgressRuleError, parseHostPatterns } from '../../common/egress/egress-rules';
import type { AgentConfig, ExecutionConfig, SecretRef } from '../run-config';
import { McpSecretError, McpSecrets, runSecretRefs, TeamSecretsService } from '../secrets';
import { EnvironmentRepository } from '../environments';

export interface SecretsRun {
  teamId: string;
  environmentId: string | null;
  /** With the environment, what decides which scoped secrets the run may have. */
  executorId?: string | null;
  scheduleId?: string | null;
  config: { secrets?: SecretRef[] };
}

/** A secret a run names that it does not get, where it was named, and why. */
export interface SkippedSecret {
  name: string;
  field: string;
  reason: string;
}

export interface ResolvedRunSecrets {
  /** A plain secret's value; a bound secret's placeholder (its value never enters the sandbox). */
  env: Record<string, string>;
  /** The secrets bound to hosts, for the execution's egress proxy to inject. */
  bound: BoundSecret[];
  /**
   * A vendor CLI's key in an `allowlist` environment: its secret's name and the placeholder the
   * CLI gets instead of the value (bound to the provider's hosts). Absent otherwise.
   */
  providerKey?: { name: string; placeholder: string };
  /** Shown on the run's timeline (`secrets_skipped`); the run goes on without them. */
  skipped: SkippedSecret[];
}

const GUEST =
  "another team's environment: its secrets are not given to this team's runs (list your own in config.secrets)";

/**
 * The team secrets a run gets as environment variables named after them: its environment's
 * `secrets`, then its own `config.secrets` (a name in both is the same team secret, so the run's
 * entry simply repeats it). A secret with `inject_hosts` becomes a placeholder in the sandbox
 * (`ambient-secret-<NAME>-<random>`, new each execution) and a BoundSecret the egress proxy puts in
 * its place in requests to those hosts only; the first entry naming a secret decides whether it
 * is bound. Always resolved in the run's team. A guest team running in a shared environment gets
 * none of the environment's `secrets` (names the owner chose): it lists its own in the run's
 * `config.secrets`. Secrets out of the run's scope never resolve. As in Oz, a name with no secret
 * is skipped and reported rather than failing the run.
 */
@Injectable()
export class RunSecretsService {
  constructor(
    private readonly environments: EnvironmentRepository,
    private readonly secrets: TeamSecretsService,
    private readonly mcpSecrets: McpSecrets,
  ) {}

  /**
   * The run's config with its MCP `env`/`headers` values revealed, for the execution only. Unlike
   * `config.secrets`, a value that cannot be revealed (a referenced team secret deleted since)
   * throws McpSecretError: the server would otherwise run without its credential.
   */
  async executionConfig(
    run: Omit<SecretsRun, 'config'> & { config: AgentConfig },
  ): Promise<ExecutionConfig> {
    const { mcp_servers: servers, ...rest } = run.config;
    if (!servers) return rest;
    const refs = runSecretRefs({ mcp_servers: servers });
    const refused = await this.scopeRefusals(run, refs);
    const first = refs.find((ref) => refused.has(ref.name));
    if (first) throw new McpSecretError(`${first.field}: ${refused.get(first.name)}`);
    return { ...rest, mcp_servers: await this.mcpSecrets.reveal(run.teamId, servers) };
  }

  /**
   * `providerKey`: a vendor CLI's key (harness_auth_secrets) and its provider's hosts; in an
   * `allowlist` environment it is bound to them like a secret with `inject_hosts`.
   */
  async resolve(
    run: SecretsRun,
    providerKey?: { name: string; hosts: string[] } | null,
  ): Promise<ResolvedRunSecrets> {
    const refs: { ref: SecretRef; field: string }[] = [];
    const skippedAsGuest: SkippedSecret[] = [];
    let allowlist = false;
    if (run.environmentId) {
      const environment = await this.environments.configOf(run.environmentId);
      allowlist = environment?.config.network === 'allowlist';
      const entries: SecretRef[] = environment?.config.secrets ?? [];
      for (const [i, ref] of entries.entries()) {
        const field = `environment ${run.environmentId} secrets.${i}`;
        // Names another team chose never resolve in this team's store (see SECURITY.md).
        if (environment!.teamId !== run.teamId) {
          skippedAsGuest.push({ name: ref.name, field: `${field}.name`, reason: GUEST });
        } else {
          refs.push({ ref, field });
        }
      }
    }
    for (const [i, ref] of (run.config.secrets ?? []).entries()) {
      refs.push({ ref, field: `config.secrets.${i}` });
    }
    const resolved: ResolvedRunSecrets = { env: {}, bound: [], skipped: skippedAsGuest };
    const enabled = this.secrets.cipher.enabled;
    const refused = enabled
      ? await this.scopeRefusals(run, [
          ...refs.map(({ ref }) => ref),
          ...(allowlist && providerKey ? [providerKey] : []),
        ])
      : new Map<string, string>();
    for (const { ref, field } of refs) {
      const { name } = ref;
      if (name in resolved.env) continue;
      const refusal = refused.get(name);
      if (refusal) {
        resolved.skipped.push({ name, field: `${field}.name`, reason: refusal });
        continue;
      }
      const hosts = boundHosts(ref, field);
      if ('problem' in hosts) {
        resolved.skipped.push({ name, field: hosts.field, reason: hosts.problem });
        continue;
      }
      const value = enabled ? await this.secrets.reveal(run.teamId, name) : null;
      if (value === null) {
        const reason = enabled
          ? 'the team has no secret of that name'
          : 'team secrets are disabled on this server (AMBIENT_SECRETS_KEY is not set)';
        resolved.skipped.push({ name, field: `${field}.name`, reason });
      } else if (hosts.hosts) {
        const placeholder = secretPlaceholder(name);
        resolved.bound.push({ name, placeholder, value, hosts: hosts.hosts });
        resolved.env[name] = placeholder;
      } else {
        resolved.env[name] = value;
      }
    }
    if (allowlist && providerKey && enabled && !refused.has(providerKey.name)) {
      // Missing, it is the harness that says so (integration_not_configured), as without a proxy.
      const value = await this.secrets.reveal(run.teamId, providerKey.name);
      if (value !== null) {
        const placeholder = secretPlaceholder(providerKey.name);
        resolved.bound.push({
          name: providerKey.name,
          placeholder,
          value,
          hosts: providerKey.hosts,
        });
        resolved.providerKey = { name: providerKey.name, placeholder };
      }
    }
    return resolved;
  }

  /**
   * Defence in depth behind run creation's check: secrets out of the run's scope, and webhook
   * signing secrets, never resolve (a scope narrowed after the run was created included).
   */
  private scopeRefusals(
    run: Omit<SecretsRun, 'config'>,
    refs: { name: string }[],
  ): Promise<Map<string, string>> {
    return this.secrets.refusals(
      run.teamId,
      refs.map((ref) => ref.name),
      {
        environmentId: run.environmentId,
        executorId: run.executorId ?? null,
        scheduleId: run.scheduleId ?? null,
      },
    );
  }
}

/**
 * What stands for a bound secret inside the sandbox: its name (a reader knows what it is) and
 * 24 random bytes (nothing to guess, nothing of the value, useless in another execution).
 */
export function secretPlaceholder(name: string): string {
  return `ambient-secret-${name}-${randomBytes(24).toString('base64url')}`;
}

/**
 * A reference's `inject_hosts` (null: a plain secret); a problem when the stored hosts no longer
 * parse: the secret is then skipped rather than given unbound.
 */
function boundHosts(
  ref: SecretRef,
  field: string,
): { hosts: string[] | null } | { problem: string; field: string } {
  if (ref.inject_hosts === undefined || ref.inject_hosts === null) return { hosts: null };
  try {
    parseHostPatterns(ref.inject_hosts, `${field}.inject_hosts`);
  } catch (error) {
    if (!(error instanceof EgressRuleError)) throw error;
    return { problem: error.detail, field: error.field };
  }
  return { hosts: ref.inject_hosts };
}
