import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { AuditLog } from '../audit';
import { ModelsService } from '../models';
import { checkedApprovals, secretRef } from '../run-config';
import type { SecretRef } from '../run-config';
import { McpSecrets, assertMcpServers } from '../secrets';
import { ApiKeysService, TeamsService, TeamUserRepository } from '../teams';
import type { Principal } from '../../common/auth/principal';
import { AgentAvailability } from './agent-availability.service';
import { parseApprovers } from './agent-approvers';
import { AgentIdentity } from './agent-identity.entity';
import { AgentIdentityRepository } from './agent-identity.repository';
import { IdentityApprovals } from './identity-approvals.service';
import { toAgentResponse } from './agent-response.mapper';
import {
  AgentSettings,
  AgentSettingsInput,
  applySettings,
  duplicateSecretNames,
} from './agent-settings';
import type { CreateAgentDto, UpdateAgentDto } from './dto/agent-request.dto';
import type { AgentResponseDto } from './dto/agent-response.dto';

/**
 * Agent identities of a team: service-account users that can execute runs and own API keys.
 * Only human callers manage them (the controller checks); every lookup is team-scoped.
 */
@Injectable()
export class IdentitiesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly identities: AgentIdentityRepository,
    private readonly teamsAndUsers: TeamUserRepository,
    private readonly teams: TeamsService,
    private readonly apiKeys: ApiKeysService,
    private readonly models: ModelsService,
    private readonly availability: AgentAvailability,
    private readonly mcpSecrets: McpSecrets,
    private readonly audit: AuditLog,
    private readonly approvals: IdentityApprovals,
  ) {}

  /** A live (not deleted) identity of the team, or null. */
  findActive(teamId: string, uid: string): Promise<AgentIdentity | null> {
    return this.identities.findLive(teamId, uid);
  }

  async list(teamId: string, factoryUid?: string): Promise<AgentResponseDto[]> {
    const identities = await this.identities.listLive(teamId, factoryUid);
    const available = await this.availability.availableUids(teamId);
    return identities.map((i) => toAgentResponse(i, available.has(i.uid)));
  }

  async get(teamId: string, uid: string): Promise<AgentResponseDto> {
    return this.respond(await this.mustFind(teamId, uid));
  }

  async create(principal: Principal, body: CreateAgentDto): Promise<AgentResponseDto> {
    const name = checkedName(body.name);
    const settings = await this.checkedSettings(principal, {}, body);
    const identity = await this.dataSource.transaction(async (manager) => {
      // Serialises creations per team, so concurrent requests cannot overshoot the limit.
      await this.teamsAndUsers.lockTeam(manager, principal.teamId);
      const [count, limit] = await Promise.all([
        this.availability.count(principal.teamId, manager),
        this.availability.limitFor(principal.teamId),
      ]);
      if (count >= limit) {
        throw new ApiError(
          'not_authorized',
          `the team's plan allows ${limit} agent identit${limit === 1 ? 'y' : 'ies'} and has ${count}; ` +
            'delete one or raise the limit (npm run cli -- identities set-limit)',
          { title: 'Agent limit reached' },
        );
      }
      const user = await this.teams.createServiceAccount(manager, principal.teamId, name);
      const row: AgentIdentity = {
        uid: user.id,
        teamId: principal.teamId,
        name,
        factoryUid: body.factory_uid || null,
        settings,
        createdBy: principal.userId,
        createdAt: user.createdAt,
        updatedAt: user.createdAt,
        deletedAt: null,
      };
      await this.identities.insert(manager, row);
      await this.audit.record(manager, principal, 'agent.create', agentTarget(row.uid), {
        name,
        ...(row.factoryUid ? { factory_uid: row.factoryUid } : {}),
      });
      return row;
    });
    return this.respond(identity);
  }

  async update(principal: Principal, uid: string, body: UpdateAgentDto): Promise<AgentResponseDto> {
    const given = Object.entries(body).filter(([, value]) => value !== undefined);
    if (given.some(([key]) => key === 'secrets_append')) {
      if (given.length > 1) {
        throw ApiError.invalid('secrets_append', 'must be sent alone, without any other field');
      }
      if (body.secrets_append === null) throw ApiError.invalid('secrets_append', 'must be a list');
    }
    const name = body.name === undefined || body.name === null ? null : checkedName(body.name);
    const identity = await this.dataSource.transaction(async (manager) => {
      const current = await this.lockActive(manager, principal.teamId, uid);
      const input: AgentSettingsInput = body.secrets_append
        ? { secrets: appendSecrets(current.settings.secrets ?? [], body.secrets_append) }
        : body;
      current.settings = await this.checkedSettings(principal, current.settings, input);
      if (name !== null) {
        current.name = name;
        await this.teams.renameUser(manager, uid, name);
      }
      current.updatedAt = new Date();
      await this.identities.update(manager, uid, {
        name: current.name,
        settings: current.settings,
        updatedAt: current.updatedAt,
      });
      await this.audit.record(manager, principal, 'agent.update', agentTarget(uid), {
        changed: given.map(([key]) => key).sort(),
      });
      await this.approvals.changed(manager, [uid]);
      return current;
    });
    return this.respond(identity);
  }

  /**
   * Soft-deletes the identity and deletes every API key it has in one transaction: no request
   * can see the identity gone while one of its keys still authenticates.
   */
  async delete(principal: Principal, uid: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const identity = await this.lockActive(manager, principal.teamId, uid);
      const now = new Date();
      await this.identities.softDelete(manager, uid, now);
      await this.teams.softDeleteUser(manager, uid, now);
      const keys = await this.apiKeys.deleteAllForUser(manager, uid);
      await this.audit.record(manager, principal, 'agent.delete', agentTarget(uid), {
        name: identity.name,
        api_keys_deleted: keys,
      });
    });
  }

  /**
   * Creates an API key for the identity while holding its row, so a delete running at the same
   * time either comes first (404 here) or deletes the new key with the others.
   */
  async createKey(
    principal: Principal,
    uid: string,
    name: string,
  ): Promise<{ key: string; id: string }> {
    return this.dataSource.transaction(async (manager) => {
      await this.lockActive(manager, principal.teamId, uid);
      const user = await this.teams.findServiceAccount(uid);
      if (!user) throw ApiError.notFound(`agent "${uid}"`);
      const created = await this.apiKeys.create(user, name, { manager });
      await this.audit.record(manager, principal, 'api_key.create', keyTarget(created.id), {
        name,
        agent_uid: uid,
      });
      return created;
    });
  }

  /** Revokes one of the identity's keys; false when it has no such key. */
  async revokeKey(principal: Principal, uid: string, keyId: string): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      await this.lockActive(manager, principal.teamId, uid);
      const key = await this.apiKeys.revokeForUser(uid, keyId, manager);
      if (!key) return false;
      await this.audit.record(manager, principal, 'api_key.revoke', keyTarget(keyId), {
        name: key.name,
        agent_uid: uid,
      });
      return true;
    });
  }

  async mustFind(teamId: string, uid: string): Promise<AgentIdentity> {
    const identity = await this.findActive(teamId, uid);
    if (!identity) throw ApiError.notFound(`agent "${uid}"`);
    return identity;
  }

  private async lockActive(
    manager: EntityManager,
    teamId: string,
    uid: string,
  ): Promise<AgentIdentity> {
    const identity = await this.identities.lockLive(manager, teamId, uid);
    if (!identity) throw ApiError.notFound(`agent "${uid}"`);
    return identity;
  }

  private async respond(identity: AgentIdentity): Promise<AgentResponseDto> {
    return toAgentResponse(
      identity,
      await this.availability.isAvailable(identity.teamId, identity.uid),
    );
  }

  /**
   * `approvals` normalised (as `[]` to clear), `approvers` normalised with every user id a person
   * of the team (e-mails are taken as given: people may join later).
   */
  private async checkedApprovalSettings(
    teamId: string,
    input: AgentSettingsInput,
  ): Promise<AgentSettingsInput> {
    const checked = { ...input };
    if (input.approvals) checked.approvals = checkedApprovals(input.approvals, 'approvals') ?? [];
    if (input.approvers) {
      const approvers = parseApprovers(input.approvers);
      const ids = approvers.filter((entry) => !entry.includes('@'));
      const people = await this.teams.usersByIds(teamId, ids);
      const isPerson = (id: string) =>
        people.get(id)?.type === 'user' && !people.get(id)?.deletedAt;
      const unknown = ids.findIndex((id) => !isPerson(id));
      if (unknown >= 0) {
        throw ApiError.invalid(
          `approvers.${approvers.indexOf(ids[unknown])}`,
          `"${ids[unknown]}" is not a person of this team`,
        );
      }
      checked.approvers = approvers;
    }
    return checked;
  }

  /** The settings after applying `input`, refused with the offending field named. */
  private async checkedSettings(
    principal: Principal,
    current: AgentSettings,
    input: AgentSettingsInput,
  ): Promise<AgentSettings> {
    if (input.on_behalf_of_enabled === true && principal.role !== 'admin') {
      throw new ApiError('not_authorized', 'only team admins may set on_behalf_of_enabled');
    }
    const duplicates = duplicateSecretNames(input.secrets ?? []);
    if (duplicates.length) {
      throw ApiError.invalid('secrets', `duplicate name(s): ${duplicates.join(', ')}`);
    }
    if (input.mcp_servers) assertMcpServers(input.mcp_servers, 'mcp_servers');
    input = await this.checkedApprovalSettings(principal.teamId, input);
    if (input.base_model && !this.models.find(input.base_model)) {
      throw ApiError.invalid(
        'base_model',
        `unknown model "${input.base_model}"; GET /agent/models lists the models available`,
      );
    }
    if (!input.mcp_servers) return applySettings(current, input);
    // Values sent back masked (a GET response) keep what is stored.
    const mcpServers = await this.mcpSecrets.seal(
      principal.teamId,
      input.mcp_servers,
      'mcp_servers',
      current.mcp_servers,
    );
    return applySettings(current, { ...input, mcp_servers: mcpServers });
  }
}

function agentTarget(uid: string) {
  return { type: 'agent', id: uid };
}

function keyTarget(id: string) {
  return { type: 'api_key', id };
}

function checkedName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw ApiError.invalid('name', 'must not be empty');
  return trimmed;
}

/** Adds secrets that are not there yet; a name repeated within the request is refused. */
function appendSecrets(current: SecretRef[], added: SecretRef[]): SecretRef[] {
  const duplicates = duplicateSecretNames(added);
  if (duplicates.length) {
    throw ApiError.invalid('secrets_append', `duplicate name(s): ${duplicates.join(', ')}`);
  }
  const names = new Set(current.map((s) => s.name));
  return [...current, ...added.filter((s) => !names.has(s.name)).map(secretRef)];
}
