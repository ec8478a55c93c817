import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { isIdentifierText } from '../../common/errors/unicode';
import { newUid } from '../../common/ids';
import { AuditLog } from '../audit';
import type { Principal } from '../../common/auth/principal';
import { MAX_SECRET_VALUE_BYTES, SECRET_NAME_PATTERN } from './dto/secret.dto';
import { SecretCipher } from './secret-cipher';
import { SecretPurpose, SecretRunContext, secretRefusal, SecretScope } from './secret-scope';
import { TeamSecret } from './team-secret.entity';
import { TeamSecretRepository } from './team-secret.repository';

/** The team secret whose value authenticates clones of private repositories. */
export const GIT_TOKEN_SECRET = 'GITHUB_TOKEN';

/** Says why a secret may not be deleted (e.g. "used by webhook X"), or null when it may. */
export type SecretUsageCheck = (
  teamId: string,
  name: string,
  manager: EntityManager,
) => Promise<string | null>;

/** Of `ids` (not empty), those naming one of the team's rows of a scope, in the caller's transaction. */
export type SecretScopeIdCheck = (
  manager: EntityManager,
  teamId: string,
  ids: string[],
) => Promise<Set<string>>;

export interface NewSecret {
  name: string;
  value: string;
  description?: string | null;
  /** Limits the runs that may have it (admins); unscoped by default. */
  scope?: SecretScope | null;
  /** `webhook`: a webhook's signing secret (set by the webhook that creates it), never a run's. */
  purpose?: SecretPurpose;
}

/** A secret a run names, and where (the field a refusal names). */
export interface SecretRef {
  name: string;
  field: string;
}

/** What a scope's ids name, for the error each unknown id gets. */
const SCOPE_NAMES: Record<keyof SecretScope, string> = {
  environments: 'environment',
  agent_identities: 'agent identity',
  schedules: 'schedule',
};

/**
 * Team secrets: names are listed, values are encrypted at rest and only ever decrypted for the
 * server's own use (verifying webhook deliveries). Anyone in the team may create a secret; only
 * its creator or a team admin may change or delete it.
 */
@Injectable()
export class TeamSecretsService {
  private readonly usageChecks: SecretUsageCheck[] = [];
  private readonly scopeOwners = new Map<keyof SecretScope, SecretScopeIdCheck>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly secrets: TeamSecretRepository,
    readonly cipher: SecretCipher,
    private readonly audit: AuditLog,
  ) {}

  addUsageCheck(check: SecretUsageCheck): void {
    this.usageChecks.push(check);
  }

  /**
   * The module owning a scope's rows (environments, identities, schedules: all above secrets)
   * says which of a scope's ids exist.
   */
  addScopeOwner(key: keyof SecretScope, check: SecretScopeIdCheck): void {
    this.scopeOwners.set(key, check);
  }

  list(teamId: string): Promise<TeamSecret[]> {
    return this.secrets.list(teamId);
  }

  find(teamId: string, name: string, manager?: EntityManager): Promise<TeamSecret | null> {
    return this.secrets.find(teamId, name, manager);
  }

  async create(
    principal: Principal,
    input: NewSecret,
    manager?: EntityManager,
  ): Promise<TeamSecret> {
    this.cipher.assertEnabled();
    assertName(input.name);
    assertValue(input.value);
    const run = async (m: EntityManager) => {
      if (input.scope) await this.assertScopeIds(m, principal.teamId, input.scope);
      const secret = await this.insert(m, principal, input);
      await this.audit.record(m, principal, 'secret.create', target(secret.name), {
        description: secret.description,
        ...(secret.scope ? { scope: secret.scope } : {}),
      });
      return secret;
    };
    return manager ? run(manager) : this.dataSource.transaction(run);
  }

  /**
   * Sets a new value, description or scope (`null`: unscoped); returns the updated secret. A
   * value is required unless the scope changes.
   */
  async update(
    principal: Principal,
    name: string,
    input: { value?: string; description?: string | null; scope?: SecretScope | null },
    manager?: EntityManager,
  ): Promise<TeamSecret> {
    this.cipher.assertEnabled();
    if (input.value === undefined && input.scope === undefined) {
      throw ApiError.invalid('value', 'is required (unless scope is given)');
    }
    if (input.value !== undefined) assertValue(input.value);
    const run = async (m: EntityManager) => {
      const secret = await this.lockedForChange(m, principal, name);
      if (input.scope) await this.assertScopeIds(m, principal.teamId, input.scope);
      if (input.value !== undefined) {
        secret.ciphertext = this.cipher.encrypt(input.value, principal.teamId);
      }
      if (input.description !== undefined) secret.description = input.description;
      if (input.scope !== undefined) secret.scope = input.scope;
      secret.updatedAt = new Date();
      await this.secrets.save(m, secret);
      // The value itself is never recorded: only that it changed.
      await this.audit.record(m, principal, 'secret.update', target(name), {
        value_changed: input.value !== undefined,
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.scope !== undefined ? { scope: input.scope } : {}),
      });
      return secret;
    };
    return this.audit.deniedOn(principal, 'secret.update', target(name), () =>
      manager ? run(manager) : this.dataSource.transaction(run),
    );
  }

  async remove(principal: Principal, name: string): Promise<void> {
    const remove = () =>
      this.dataSource.transaction(async (m) => {
        const secret = await this.lockedForChange(m, principal, name);
        for (const check of this.usageChecks) {
          const reason = await check(principal.teamId, name, m);
          if (reason) throw new ApiError('conflict', `secret "${name}" is ${reason}`);
        }
        await this.audit.record(m, principal, 'secret.delete', target(name));
        await this.secrets.delete(m, secret.id);
      });
    await this.audit.deniedOn(principal, 'secret.delete', target(name), remove);
  }

  /**
   * Of the secrets `names` name, those a run may not have, with why: out of their scope, or a
   * webhook's signing secret. Names with no secret are not refused here.
   */
  async refusals(
    teamId: string,
    names: string[],
    run: SecretRunContext,
  ): Promise<Map<string, string>> {
    const refused = new Map<string, string>();
    const unique = [...new Set(names)];
    if (unique.length === 0) return refused;
    for (const secret of await this.secrets.scopesOf(teamId, unique)) {
      const reason = secretRefusal(secret, run);
      if (reason) refused.set(secret.name, reason);
    }
    return refused;
  }

  /** Refuses (400 naming the field) the first secret a run names that it may not have. */
  async assertRunMay(teamId: string, refs: SecretRef[], run: SecretRunContext): Promise<void> {
    const refused = await this.refusals(
      teamId,
      refs.map((r) => r.name),
      run,
    );
    const first = refs.find((r) => refused.has(r.name));
    if (first) throw ApiError.invalid(first.field, refused.get(first.name)!);
  }

  /** `reveal` for a run's execution: null also when the run may not have the secret. */
  async revealForRun(teamId: string, name: string, run: SecretRunContext): Promise<string | null> {
    if ((await this.refusals(teamId, [name], run)).has(name)) return null;
    return this.reveal(teamId, name);
  }

  /** The team's token for clones of private repositories (GITHUB_TOKEN), if any. */
  async gitToken(teamId: string): Promise<string | null> {
    if (!this.cipher.enabled) return null;
    return this.reveal(teamId, GIT_TOKEN_SECRET);
  }

  /** The decrypted value of a team secret, or null when there is no such secret. */
  async reveal(teamId: string, name: string, manager?: EntityManager): Promise<string | null> {
    const secret = await this.find(teamId, name, manager);
    return secret ? this.cipher.decrypt(secret.ciphertext, teamId) : null;
  }

  private async insert(m: EntityManager, principal: Principal, input: NewSecret) {
    if (await this.secrets.exists(m, principal.teamId, input.name)) {
      throw alreadyExists(input.name);
    }
    const now = new Date();
    const secret: TeamSecret = {
      id: newUid(),
      teamId: principal.teamId,
      name: input.name,
      description: input.description ?? null,
      scope: input.scope ?? null,
      purpose: input.purpose ?? null,
      ciphertext: this.cipher.encrypt(input.value, principal.teamId),
      createdBy: principal.userId,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.secrets.insert(m, secret);
    } catch (err) {
      if ((err as { code?: string }).code === 'ER_DUP_ENTRY') throw alreadyExists(input.name);
      throw err;
    }
    return secret;
  }

  /** Every id of a scope names one of the team's environments, agent identities or schedules. */
  private async assertScopeIds(m: EntityManager, teamId: string, scope: SecretScope) {
    for (const [key, what] of Object.entries(SCOPE_NAMES)) {
      const ids = scope[key as keyof SecretScope];
      if (ids.length === 0) continue;
      const owner = this.scopeOwners.get(key as keyof SecretScope);
      if (!owner) throw new Error(`no module of this process owns the secret scope "${key}"`);
      // Text no id can be made of is unknown without asking the owner's ASCII columns.
      const comparable = ids.filter(isIdentifierText);
      const known = comparable.length > 0 ? await owner(m, teamId, comparable) : new Set<string>();
      const index = ids.findIndex((value) => !known.has(value));
      if (index >= 0) {
        throw ApiError.invalid(`scope.${key}.${index}`, `the team has no ${what} "${ids[index]}"`);
      }
    }
  }

  private async lockedForChange(m: EntityManager, principal: Principal, name: string) {
    const secret = await this.secrets.locked(m, principal.teamId, name);
    if (!secret) throw ApiError.notFound(`secret "${name}"`);
    if (principal.role !== 'admin' && secret.createdBy !== principal.userId) {
      throw new ApiError(
        'not_authorized',
        `only a team admin or the creator of secret "${name}" may change or delete it`,
      );
    }
    return secret;
  }
}

function target(name: string) {
  return { type: 'secret', id: name };
}

function assertName(name: string): void {
  if (!SECRET_NAME_PATTERN.test(name)) {
    throw ApiError.invalid(
      'name',
      'must start with a letter or _ and hold only letters, digits and _ (at most 128)',
    );
  }
}

function assertValue(value: string): void {
  if (value.length === 0) throw ApiError.invalid('value', 'must not be empty');
  if (Buffer.byteLength(value, 'utf8') > MAX_SECRET_VALUE_BYTES) {
    throw ApiError.invalid('value', `must be at most ${MAX_SECRET_VALUE_BYTES} bytes`);
  }
}

function alreadyExists(name: string): ApiError {
  return new ApiError('conflict', `a secret named "${name}" already exists in this team`);
}
