import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AgentConfig, ExecutionConfig } from '../run-config';
import { McpSecretError, McpSecrets, runSecretRefs, TeamSecretsService } from '../secrets';
import { Environment } from '../environments';

export interface SecretsRun {
  teamId: string;
  environmentId: string | null;
  /** With the environment, what decides which scoped secrets the run may have. */
  executorId?: string | null;
  scheduleId?: string | null;
  config: { secrets?: { name: string }[] };
}

/** A secret a run names that it does not get, where it was named, and why. */
export interface SkippedSecret {
  name: string;
  field: string;
  reason: string;
}

export interface ResolvedRunSecrets {
  env: Record<string, string>;
  /** Shown on the run's timeline (`secrets_skipped`); the run goes on without them. */
  skipped: SkippedSecret[];
}

const GUEST =
  "another team's environment: its secrets are not given to this team's runs (list your own in config.secrets)";

/**
 * The team secrets a run gets as environment variables named after them: its environment's
 * `secrets`, then its own `config.secrets` (a name in both is the same team secret, so the run's
 * entry simply repeats it). Always resolved in the run's team. A guest team running in a shared
 * environment gets none of the environment's `secrets` (names the owner chose): it lists its own in
 * the run's `config.secrets`. As in Oz, a name with no secret is skipped and reported rather than
 * failing the run.
 */
@Injectable()
export class RunSecretsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
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

  async resolve(run: SecretsRun): Promise<ResolvedRunSecrets> {
    const refs: { name: string; field: string }[] = [];
    const skippedAsGuest: SkippedSecret[] = [];
    if (run.environmentId) {
      const environment = await this.dataSource.getRepository(Environment).findOne({
        select: { id: true, teamId: true, config: true },
        where: { id: run.environmentId },
      });
      for (const [i, { name }] of (environment?.config.secrets ?? []).entries()) {
        const field = `environment ${run.environmentId} secrets.${i}.name`;
        // Names another team chose never resolve in this team's store (see SECURITY.md).
        if (environment!.teamId !== run.teamId) skippedAsGuest.push({ name, field, reason: GUEST });
        else refs.push({ name, field });
      }
    }
    for (const [i, { name }] of (run.config.secrets ?? []).entries()) {
      refs.push({ name, field: `config.secrets.${i}.name` });
    }
    const resolved: ResolvedRunSecrets = { env: {}, skipped: skippedAsGuest };
    const enabled = this.secrets.cipher.enabled;
    const refused = enabled ? await this.scopeRefusals(run, refs) : new Map<string, string>();
    for (const { name, field } of refs) {
      if (name in resolved.env) continue;
      const refusal = refused.get(name);
      if (refusal) {
        resolved.skipped.push({ name, field, reason: refusal });
        continue;
      }
      const value = enabled ? await this.secrets.reveal(run.teamId, name) : null;
      if (value === null) {
        const reason = enabled
          ? 'the team has no secret of that name'
          : 'team secrets are disabled on this server (AMBIENT_SECRETS_KEY is not set)';
        resolved.skipped.push({ name, field, reason });
      } else {
        resolved.env[name] = value;
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
