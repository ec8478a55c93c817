import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EgressGuard } from '../../../common/egress/egress-guard';
import { ApiError } from '../../../common/errors/api-error';
import { newUid } from '../../../common/ids';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { AuditLog } from '../../audit';
import type { Principal } from '../../../common/auth/principal';
import { WebhookStore } from '../webhook-store.repository';
import { ApplyResult, DefinitionApplier } from './definition-applier.service';
import { DefinitionFile } from './definition/definition.types';
import { Factory } from './entities/factory.entity';
import { FactoryFile } from './entities/factory-file.entity';
import { FactoryFileStore } from './factory-file-store.repository';
import { assertCanManage } from './factory-permissions';
import { FactoryStore } from './factory-store.repository';
import {
  GitRepository,
  protocolOf,
  RepositoryError,
  RepositoryLocation,
} from './repository/git-repository';
import { pathComponentProblem } from '../../../common/tenant-files/path-component';
import { DefinitionTreeError } from './repository/git-definition-tree';
import { RepositoryCredentials } from './repository/repository-credentials';

export interface NewFactory {
  name?: string;
  description?: string;
  repository?: { url: string; branch?: string; path?: string; credentials_secret?: string };
}

export interface FactoryChanges {
  /** null removes the credentials; undefined leaves them. */
  repository_credentials_secret?: string | null;
}

/** Factories: create (managed or repository-backed), read, delete, and managed definitions. */
@Injectable()
export class FactoriesService {
  readonly git: GitRepository;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly factories: FactoryStore,
    private readonly factoryFiles: FactoryFileStore,
    private readonly applier: DefinitionApplier,
    private readonly webhooks: WebhookStore,
    private readonly credentials: RepositoryCredentials,
    private readonly audit: AuditLog,
  ) {
    this.git = new GitRepository(
      allowedProtocols(config),
      EgressGuard.fromSetting(config.egress.allow),
    );
  }

  /** Creates the factory and applies its first definition in one transaction. */
  async create(principal: Principal, input: NewFactory): Promise<ApplyResult> {
    const now = new Date();
    const factory: Factory = {
      id: newUid(),
      teamId: principal.teamId,
      name: input.name ?? '',
      description: input.description ?? null,
      source: input.repository ? 'repository' : 'managed',
      repositoryUrl: null,
      repositoryBranch: null,
      repositoryPath: null,
      repositoryCredentialsSecret: null,
      settings: null,
      appliedCommit: null,
      appliedAt: null,
      lastSync: null,
      syncLockUntil: null,
      createdBy: principal.userId,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    };
    if (!input.repository) {
      if (!input.name?.trim()) throw ApiError.invalid('name', 'is required for a managed factory');
      return this.applier.apply(
        factory.id,
        [{ path: 'factory.yaml', content: initialFactoryYaml(input.name, input.description) }],
        { create: factory, events: this.createdEvents(principal, factory) },
      );
    }
    const location = this.checkLocation(input.repository);
    const secretName = input.repository.credentials_secret ?? null;
    if (secretName) {
      const field = 'repository.credentials_secret';
      await this.credentials.check(principal.teamId, secretName, location.url, field);
    }
    Object.assign(factory, {
      repositoryUrl: location.url,
      repositoryBranch: location.branch,
      repositoryPath: location.path || null,
      repositoryCredentialsSecret: secretName,
    });
    const token = await this.credentials.token(principal.teamId, secretName);
    const { commit, files } = await this.git.read(location, token).catch((err: unknown) => {
      if (err instanceof DefinitionTreeError) throw ApiError.invalid('repository', err.message);
      throw err instanceof RepositoryError ? ApiError.invalid('repository.url', err.message) : err;
    });
    factory.lastSync = { at: now.toISOString(), commit, status: 'applied' };
    return this.applier.apply(factory.id, files, {
      create: factory,
      commit,
      events: this.createdEvents(principal, factory, commit),
    });
  }

  private createdEvents(principal: Principal, factory: Factory, commit?: string) {
    return ({ factory: applied }: { factory: Factory }) => [
      this.audit.entry(principal, 'factory.create', factoryTarget(factory.id), {
        name: applied.name,
        source: factory.source,
        ...(factory.repositoryUrl ? { repository_url: factory.repositoryUrl } : {}),
        ...(commit ? { commit } : {}),
      }),
    ];
  }

  async get(teamId: string, id: string): Promise<Factory> {
    const factory = await this.factories.findLive(teamId, id);
    if (!factory) throw ApiError.notFound(`factory "${id}"`);
    return factory;
  }

  async list(
    teamId: string,
    limit: number,
    after?: { createdAt: Date; id: string },
    search?: string,
  ) {
    const rows = await this.factories.listPage(teamId, limit, after, search);
    return { factories: rows.slice(0, limit), more: rows.length > limit };
  }

  /** Changes a factory's settings (for now: a repository-backed factory's credentials). */
  async update(principal: Principal, id: string, changes: FactoryChanges): Promise<Factory> {
    const factory = await this.get(principal.teamId, id);
    await this.assertManager(principal, factory, 'factory.update');
    const secretName = changes.repository_credentials_secret;
    if (secretName !== undefined) {
      const field = 'repository_credentials_secret';
      if (factory.source !== 'repository') {
        throw ApiError.invalid(field, 'only repository-backed factories read a repository');
      }
      if (secretName !== null) {
        await this.credentials.check(principal.teamId, secretName, factory.repositoryUrl!, field);
      }
      factory.repositoryCredentialsSecret = secretName;
    }
    factory.updatedAt = new Date();
    await this.dataSource.transaction(async (manager) => {
      await this.factories.save(manager, factory);
      await this.audit.record(manager, principal, 'factory.update', factoryTarget(factory.id), {
        ...(secretName !== undefined ? { repository_credentials_secret: secretName } : {}),
      });
    });
    return factory;
  }

  /** Soft delete: its webhooks answer 404 from now on and its automations never fire again. */
  async remove(principal: Principal, id: string): Promise<void> {
    const factory = await this.get(principal.teamId, id);
    await this.assertManager(principal, factory, 'factory.delete');
    await this.dataSource.transaction(async (manager) => {
      const live = await this.webhooks.listLive(factory.id, manager);
      await this.webhooks.softDelete(
        manager,
        live.map((w) => w.id),
      );
      await this.factories.softDelete(manager, factory.id);
      await this.audit.record(manager, principal, 'factory.delete', factoryTarget(factory.id), {
        name: factory.name,
        webhooks_deleted: live.length,
      });
    });
  }

  files(factoryId: string): Promise<FactoryFile[]> {
    return this.factoryFiles.list(factoryId);
  }

  /** Replaces a managed factory's definition (validated whole, applied atomically). */
  async putDefinition(
    principal: Principal,
    id: string,
    files: DefinitionFile[],
  ): Promise<ApplyResult> {
    const factory = await this.get(principal.teamId, id);
    await this.assertManager(principal, factory, 'factory.definition_put');
    assertManaged(factory);
    return this.applier.apply(factory.id, files, {
      events: () => [
        this.audit.entry(principal, 'factory.definition_put', factoryTarget(factory.id), {
          paths: files.map((f) => f.path).sort(),
        }),
      ],
    });
  }

  /** assertCanManage, with a refusal recorded in the audit log. */
  private assertManager(principal: Principal, factory: Factory, action: string): Promise<void> {
    return this.audit.deniedOn(principal, action, factoryTarget(factory.id), () =>
      assertCanManage(principal, factory),
    );
  }

  private checkLocation(repository: NonNullable<NewFactory['repository']>): RepositoryLocation {
    const protocol = protocolOf(repository.url);
    const allowed = allowedProtocols(this.config);
    if (!protocol || !allowed.includes(protocol)) {
      throw ApiError.invalid(
        'repository.url',
        `must be a git URL using ${allowed.join(', ')} (set AMBIENT_FACTORY_REPOSITORY_PROTOCOLS to allow others)`,
      );
    }
    const branch = repository.branch ?? 'main';
    if (!/^(?!-)(?!.*\.\.)[A-Za-z0-9._/-]{1,255}$/.test(branch))
      throw ApiError.invalid('repository.branch', 'is not a valid branch name');
    const path = (repository.path ?? '').replace(/^\/+|\/+$/g, '');
    if (path && path.split('/').some((s) => pathComponentProblem(s) !== null))
      throw ApiError.invalid(
        'repository.path',
        'must be directory names inside the repository (no "..", ".", "\\", NUL or leading "-")',
      );
    return { url: repository.url, branch, path };
  }
}

function factoryTarget(id: string) {
  return { type: 'factory', id };
}

export function assertManaged(factory: Factory): void {
  if (factory.source !== 'managed') {
    throw new ApiError(
      'operation_not_supported',
      `factory "${factory.name}" is repository-backed: change its files in ${factory.repositoryUrl} (branch ${factory.repositoryBranch})`,
    );
  }
}

export function allowedProtocols(config: AppConfig): string[] {
  return config.factories.repositoryProtocols
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
}

function initialFactoryYaml(name: string, description?: string): string {
  const lines = ['schemaVersion: v1alpha1', `name: ${JSON.stringify(name.trim())}`];
  if (description) lines.push(`description: ${JSON.stringify(description)}`);
  return `${lines.join('\n')}\n`;
}
