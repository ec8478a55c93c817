import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { dockerImageRefusal, parseDockerImages } from '../../config/docker-images';
import { newUid, UID_PATTERN } from '../../common/ids';
import { AuditLog } from '../audit';
import type { EgressRuleInput } from '../../common/egress/egress-policy';
import { checkedApprovals, secretRef } from '../run-config';
import { TeamSecretsService } from '../secrets';
import type { Principal } from '../../common/auth/principal';
import { MAX_EGRESS_RULES } from '../../common/egress/egress-rules';
import { CreateEnvironmentDto, UpdateEnvironmentDto } from './dto/environment.dto';
import { listsRule, parseOneRule } from './egress-allow-rule';
import { EnvironmentConfig } from './environment-config';
import { Environment } from './environment.entity';
import { EnvironmentGrantRepository } from './environment-grant.repository';
import { EnvironmentRepository } from './environment.repository';
import { NetworkPolicyService } from './network-policy/network-policy.service';
import {
  asAccepted,
  EnvironmentAccess,
  isAccepted,
  VisibleEnvironment,
} from './environment-access';

export type { VisibleEnvironment } from './environment-access';

/**
 * Environments a team owns or was granted; only the owning team may change them. A grant counts
 * once an admin of the guest team accepted it (EnvironmentSharingService).
 */
@Injectable()
export class EnvironmentsService {
  constructor(
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly environments: EnvironmentRepository,
    private readonly grants: EnvironmentGrantRepository,
    private readonly access: EnvironmentAccess,
    private readonly secrets: TeamSecretsService,
    private readonly audit: AuditLog,
    private readonly networkPolicy: NetworkPolicyService,
  ) {}

  /** The team's environments and the accepted versions of those granted to it. */
  async listVisible(
    teamId: string,
    sortBy: 'name' | 'last_updated',
  ): Promise<VisibleEnvironment[]> {
    const grants = (await this.grants.listOfTeam(teamId)).filter(isAccepted);
    const owned = await this.environments.listOwnedBy(teamId);
    const guest = grants.length
      ? await this.environments.findByIds(grants.map((g) => g.environmentId))
      : [];
    const grantOf = new Map(grants.map((g) => [g.environmentId, g]));
    const visible: VisibleEnvironment[] = [
      ...owned.map((environment) => ({ environment, scope: 'owner' as const })),
      ...guest.map((environment) => ({
        environment: asAccepted(environment, grantOf.get(environment.id)!),
        scope: 'guest' as const,
      })),
    ];
    return visible.sort(sortBy === 'name' ? byName : byLastUpdate);
  }

  /**
   * The environment if the team owns it, or the version it accepted of one granted to it; 404
   * otherwise (existence not leaked).
   */
  async findVisible(teamId: string, uid: string): Promise<VisibleEnvironment> {
    const visible = UID_PATTERN.test(uid) ? await this.access.seenBy(teamId, uid) : null;
    if (!visible) throw ApiError.notFound(`environment "${uid}"`);
    return visible;
  }

  /** Of `uids`, the environments the team sees (as findVisible), by uid (others left out). */
  async visibleByIds(teamId: string, uids: string[]): Promise<Map<string, Environment>> {
    const wanted = [...new Set(uids.filter((uid) => UID_PATTERN.test(uid)))];
    const seen = await this.access.allSeenBy(teamId, wanted);
    return new Map([...seen].map(([uid, { environment }]) => [uid, environment]));
  }

  /** For run creation: the team may run in the environment (owned or granted). */
  async assertUsable(teamId: string, uid: string): Promise<void> {
    try {
      await this.findVisible(teamId, uid);
    } catch {
      throw ApiError.invalid('config.environment_id', `environment "${uid}" does not exist`);
    }
  }

  async create(principal: Principal, body: CreateEnvironmentDto): Promise<Environment> {
    const now = new Date();
    const environment: Environment = {
      id: newUid(),
      teamId: principal.teamId,
      name: body.name,
      config: await this.checkedConfig(principal.teamId, { name: body.name }, body),
      version: 1,
      setupFailed: false,
      shareToken: null,
      creatorId: principal.userId,
      lastEditorId: principal.userId,
      createdAt: now,
      updatedAt: now,
    };
    await this.dataSource.transaction(async (m) => {
      await this.environments.insert(m, environment);
      await this.audit.record(m, principal, 'environment.create', target(environment.id), {
        name: environment.name,
      });
    });
    return environment;
  }

  async update(
    principal: Principal,
    uid: string,
    body: UpdateEnvironmentDto,
  ): Promise<Environment> {
    if ((body as { name?: unknown }).name === null)
      throw ApiError.invalid('name', 'must not be null');
    const environment = await this.findOwned(principal, uid, 'environment.update');
    const config = await this.checkedConfig(principal.teamId, environment.config, body);
    const changes = {
      name: config.name,
      config,
      lastEditorId: principal.userId,
      updatedAt: new Date(),
    };
    const version = await this.dataSource.transaction(async (m) => {
      // Guests keep the version they accepted until they accept this one; counted in the row, so
      // two concurrent changes are two versions.
      await this.environments.updateAsNewVersion(m, uid, changes);
      await this.audit.record(m, principal, 'environment.update', target(uid), {
        changed: Object.keys(body)
          .filter((key) => (body as Record<string, unknown>)[key] !== undefined)
          .sort(),
      });
      return this.environments.versionOf(m, uid);
    });
    return { ...environment, ...changes, version };
  }

  async remove(principal: Principal, uid: string): Promise<void> {
    const environment = await this.findOwned(principal, uid, 'environment.delete');
    await this.dataSource.transaction(async (m) => {
      await this.grants.deleteAllOf(m, uid);
      await this.environments.delete(m, uid);
      await this.audit.record(m, principal, 'environment.delete', target(uid), {
        name: environment.name,
      });
    });
  }

  /**
   * Adds one rule to the environment's `egress_allow` (an admin allowing a host a run was refused,
   * from its run page); a rule already listed changes nothing and records nothing.
   */
  async allowEgress(
    principal: Principal,
    uid: string,
    input: EgressRuleInput,
  ): Promise<{ environment: Environment; added: boolean }> {
    const rule = parseOneRule(input);
    await this.findOwned(principal, uid, 'environment.egress_allow');
    return this.dataSource.transaction(async (m) => {
      const environment = await this.environments.lockForEgressChange(m, uid);
      if (!environment) throw ApiError.notFound(`environment "${uid}"`);
      const listed = environment.config.egress_allow ?? [];
      if (listsRule(listed, rule)) return { environment, added: false };
      if (listed.length >= MAX_EGRESS_RULES) {
        throw ApiError.invalid('rule', `egress_allow already lists ${MAX_EGRESS_RULES} rules`);
      }
      const config = { ...environment.config, egress_allow: [...listed, storedRule(input)] };
      const changes = { config, lastEditorId: principal.userId, updatedAt: new Date() };
      await this.environments.updateEgressAsNewVersion(m, uid, changes);
      await this.audit.record(m, principal, 'environment.egress_allow', target(uid), {
        rule: rule.source,
        network: config.network ?? null,
      });
      return { environment: { ...environment, ...changes }, added: true };
    });
  }

  /** The config after applying `body`, with every secret it names present in the team. */
  private async checkedConfig(
    teamId: string,
    base: EnvironmentConfig,
    body: UpdateEnvironmentDto,
  ): Promise<EnvironmentConfig> {
    const config = normalizeConfig(base, body);
    checkResources(config, this.appConfig.sandbox);
    if (config.network) {
      const refusal = await this.networkPolicy.networkRefusal(teamId, config.network);
      if (refusal) throw ApiError.invalid('network', refusal);
    }
    if (body.docker_image !== undefined)
      checkDockerImage(body.docker_image, this.appConfig.sandbox);
    if (body.secrets) {
      const seen = new Set<string>();
      for (const [i, { name }] of body.secrets.entries()) {
        if (seen.has(name))
          throw ApiError.invalid(`secrets.${i}.name`, `"${name}" is listed twice`);
        seen.add(name);
        if (!(await this.secrets.find(teamId, name))) {
          throw ApiError.invalid(`secrets.${i}.name`, `the team has no secret named "${name}"`);
        }
      }
    }
    return config;
  }

  /** The environment the caller's team owns; a guest team's attempt is refused and recorded. */
  async findOwned(principal: Principal, uid: string, action: string): Promise<Environment> {
    const { environment, scope } = await this.findVisible(principal.teamId, uid);
    if (scope !== 'owner') {
      const refusal = 'only the owning team may change this environment';
      await this.audit.recordDenied(principal, action, target(uid), { reason: refusal });
      throw new ApiError('not_authorized', refusal);
    }
    return environment;
  }
}

/** A rule as stored: as written, an object form without properties the parser ignores. */
function storedRule(rule: EgressRuleInput): EgressRuleInput {
  if (typeof rule === 'string') return rule;
  return rule.methods ? { host: rule.host, methods: [...rule.methods] } : { host: rule.host };
}

export function target(id: string) {
  return { type: 'environment', id };
}

function normalizeConfig(base: EnvironmentConfig, body: UpdateEnvironmentDto): EnvironmentConfig {
  const config: EnvironmentConfig = {
    github_repos: [],
    setup_commands: [],
    ...base,
  };
  for (const [key, value] of Object.entries(body)) {
    if (value !== undefined) (config as unknown as Record<string, unknown>)[key] = value;
  }
  config.github_repos = (config.github_repos ?? []).map(({ owner, repo }) => ({ owner, repo }));
  // null clears: no secrets, no providers.
  if (config.secrets === null) delete config.secrets;
  else if (config.secrets) config.secrets = config.secrets.map(secretRef);
  if (config.network === null) delete config.network;
  if (config.egress_allow === null) delete config.egress_allow;
  else if (config.egress_allow) config.egress_allow = config.egress_allow.map(storedRule);
  if (config.resources === null) delete config.resources;
  else if (config.resources) {
    const { memory_mb, pids, cpus } = config.resources;
    config.resources = {
      ...(memory_mb !== undefined ? { memory_mb } : {}),
      ...(pids !== undefined ? { pids } : {}),
      ...(cpus !== undefined ? { cpus } : {}),
    };
  }
  // Validated by the DTO; stored normalised, and null or [] clears.
  const approvals = checkedApprovals(config.approvals, 'approvals');
  if (approvals) config.approvals = approvals;
  else delete config.approvals;
  if (config.providers === null) delete config.providers;
  else if (config.providers) {
    const { aws, gcp } = config.providers;
    config.providers = { ...(aws ? { aws } : {}), ...(gcp ? { gcp } : {}) };
  }
  const names = config.github_repos.map((r) => r.repo);
  const clash = names.find((name, i) => names.indexOf(name) !== i);
  if (clash) {
    // Each repository is cloned into <workspace>/<repo>.
    throw ApiError.invalid('github_repos', `two repositories are named "${clash}"`);
  }
  return config;
}

/** An environment names only an image the operator allows (AMBIENT_DOCKER_IMAGES). */
function checkDockerImage(image: string | null, sandbox: AppConfig['sandbox']): void {
  if (image === null) return;
  const allowed = parseDockerImages(sandbox.docker.images, sandbox.docker.defaultImage);
  const refusal = dockerImageRefusal(image, allowed);
  if (refusal) throw ApiError.invalid('docker_image', refusal);
}

/** An environment may ask for up to the server's maxima, never more. */
function checkResources(config: EnvironmentConfig, sandbox: AppConfig['sandbox']): void {
  const { resources } = config;
  if (!resources) return;
  const maxima = [
    ['memory_mb', resources.memory_mb, sandbox.maxMemoryMb, 'AMBIENT_SANDBOX_MAX_MEMORY_MB'],
    ['pids', resources.pids, sandbox.maxPids, 'AMBIENT_SANDBOX_MAX_PIDS'],
    ['cpus', resources.cpus, sandbox.maxCpus, 'AMBIENT_SANDBOX_MAX_CPUS'],
  ] as const;
  for (const [field, value, max, setting] of maxima) {
    if (value !== undefined && value > max) {
      throw ApiError.invalid(
        `resources.${field}`,
        `must be at most ${max} (this server's ${setting})`,
      );
    }
  }
}

function byName(a: VisibleEnvironment, b: VisibleEnvironment): number {
  const { environment: x } = a;
  const { environment: y } = b;
  const names = x.name.localeCompare(y.name, undefined, { sensitivity: 'base' });
  return names || (x.id < y.id ? -1 : 1);
}

function byLastUpdate(a: VisibleEnvironment, b: VisibleEnvironment): number {
  const delta = b.environment.updatedAt.getTime() - a.environment.updatedAt.getTime();
  return delta || (a.environment.id < b.environment.id ? -1 : 1);
}
