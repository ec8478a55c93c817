import { SignatureVerifierRegistry } from '../verifiers/signature-verifier-registry';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Document, parseDocument } from 'yaml';
import { ApiError } from '../../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { AuditLog } from '../../audit';
import { ApplyResult, DefinitionApplier } from '../factories/definition-applier.service';
import { Diagnostic } from '../factories/definition/diagnostics';
import { Factory } from '../factories/entities/factory.entity';
import { assertManaged, FactoriesService } from '../factories/factories.service';
import { assertCanManage } from '../factories/factory-permissions';
import { SecretCipher, TeamSecretsService } from '../../secrets';
import type { Principal } from '../../../common/auth/principal';
import { Webhook } from '../entities/webhook.entity';
import { generateWebhookSecret } from '../webhook-secrets';
import { WebhookStore } from '../webhook-store.repository';
import { CreateWebhookDto } from './dto/webhook.dto';

/** A refused definition change, carried to the controller to answer with its diagnostics. */
export class DefinitionRefused extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super('definition refused');
  }
}

export interface WebhookWithSecret {
  webhook: Webhook;
  secret: string | null;
}

/**
 * Webhook management. On a managed factory every change is a change of its definition
 * (`webhooks/<name>.yaml`) applied like any other, so files and state never disagree; a
 * repository-backed factory's webhooks change only through its repository (rotation aside:
 * the secret is not in the files).
 */
@Injectable()
export class WebhookManagement implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly factories: FactoriesService,
    private readonly applier: DefinitionApplier,
    private readonly store: WebhookStore,
    private readonly secrets: TeamSecretsService,
    private readonly cipher: SecretCipher,
    private readonly verifiers: SignatureVerifierRegistry,
    private readonly audit: AuditLog,
  ) {}

  onModuleInit(): void {
    this.secrets.addUsageCheck(async (teamId, name, manager) => {
      const users = await this.store.usingSecret(teamId, name, manager);
      return users.length
        ? `used by webhook(s) ${users.map((w) => w.name).join(', ')}; change or delete them first`
        : null;
    });
  }

  async get(
    principal: Principal,
    factoryUid: string,
    webhookUid: string,
  ): Promise<{ factory: Factory; webhook: Webhook }> {
    const factory = await this.factories.get(principal.teamId, factoryUid);
    const webhook = await this.store.findLive(factory.id, webhookUid);
    if (!webhook) throw ApiError.notFound(`webhook "${webhookUid}"`);
    return { factory, webhook };
  }

  async list(principal: Principal, factoryUid: string): Promise<Webhook[]> {
    const factory = await this.factories.get(principal.teamId, factoryUid);
    return this.store.listLive(factory.id);
  }

  async create(
    principal: Principal,
    factoryUid: string,
    dto: CreateWebhookDto,
  ): Promise<WebhookWithSecret> {
    this.cipher.assertEnabled();
    const factory = await this.manageable(principal, factoryUid, 'webhook.create');
    const mode = dto.auth_mode ?? 'token';
    if (mode === 'signature' && !dto.signature_scheme)
      throw ApiError.invalid('signature_scheme', 'is required for auth_mode signature');
    if (mode !== 'signature' && dto.signature_scheme)
      throw ApiError.invalid('signature_scheme', 'is only allowed with auth_mode signature');
    if (mode !== 'signature' && dto.provider_secret)
      throw ApiError.invalid('provider_secret', 'is only allowed with auth_mode signature');
    const scheme = dto.signature_scheme ?? null;
    if (scheme && !this.verifiers.has(scheme)) {
      throw ApiError.invalid(
        'signature_scheme',
        `must be one of the following values: ${this.verifiers.names().join(', ')}`,
      );
    }
    const files = await this.currentFiles(factory);
    const path = `webhooks/${dto.name}.yaml`;
    if (files.some((f) => f.path === path))
      throw new ApiError('conflict', `factory already has a webhook named "${dto.name}"`);
    const generated = dto.provider_secret?.trim() ? null : generateWebhookSecret(mode, scheme);
    // Schemes whose provider issues the secret start disabled with a placeholder until it is set.
    const placeholder = !generated && !dto.provider_secret?.trim();
    const value =
      generated ??
      (placeholder
        ? `placeholder-${randomBytes(24).toString('base64url')}`
        : dto.provider_secret!.trim());
    const secretName =
      dto.secret_name ?? `WEBHOOK_${dto.name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_SECRET`;
    const yaml = new Document({
      authMode: mode,
      ...(scheme ? { signatureScheme: scheme } : {}),
      secretName,
      ...(dto.delivery_id_header ? { deliveryIdHeader: dto.delivery_id_header } : {}),
      enabled: !placeholder,
    }).toString();
    const result = await this.applier.apply(factory.id, [...files, { path, content: yaml }], {
      prepare: async (manager) => {
        if (await this.secrets.find(principal.teamId, secretName, manager)) {
          throw new ApiError(
            'conflict',
            `team secret "${secretName}" already exists; pass another secret_name`,
          );
        }
        await this.secrets.create(
          principal,
          {
            name: secretName,
            value,
            description: `webhook ${dto.name} of factory ${factory.name}`,
            // The server's own: runs never get a webhook's signing secret or URL token.
            purpose: 'webhook',
          },
          manager,
        );
      },
      events: ({ webhooks }) => {
        const created = webhooks.find((w) => w.name === dto.name);
        return [
          this.audit.entry(principal, 'webhook.create', webhookTarget(created?.id ?? dto.name), {
            factory_id: factory.id,
            name: dto.name,
            auth_mode: mode,
            ...(scheme ? { signature_scheme: scheme } : {}),
            secret_name: secretName,
          }),
        ];
      },
    });
    return { webhook: this.applied(result, dto.name), secret: generated };
  }

  /** Disabling answers 404 at once; enabling takes a fresh snapshot of the team secret. */
  async setEnabled(
    principal: Principal,
    factoryUid: string,
    webhookUid: string,
    enabled: boolean,
  ): Promise<Webhook> {
    const { factory, webhook } = await this.get(principal, factoryUid, webhookUid);
    await this.assertManager(principal, factory, 'webhook.update', webhookTarget(webhook.id));
    assertManaged(factory);
    const files = await this.currentFiles(factory);
    const path = `webhooks/${webhook.name}.yaml`;
    const edited = files.map((f) => {
      if (f.path !== path) return f;
      const doc = parseDocument(f.content);
      doc.set('enabled', enabled);
      return { path, content: doc.toString() };
    });
    const result = await this.applier.apply(factory.id, edited, {
      events: () => [
        this.audit.entry(principal, 'webhook.update', webhookTarget(webhook.id), {
          factory_id: factory.id,
          enabled,
        }),
      ],
    });
    return this.applied(result, webhook.name);
  }

  /** A new secret, effective at once; the old one fails from the next delivery on. */
  async rotate(
    principal: Principal,
    factoryUid: string,
    webhookUid: string,
  ): Promise<WebhookWithSecret> {
    this.cipher.assertEnabled();
    const { factory, webhook } = await this.get(principal, factoryUid, webhookUid);
    const target = webhookTarget(webhook.id);
    await this.assertManager(principal, factory, 'webhook.rotate_secret', target);
    const secret = generateWebhookSecret(webhook.authMode, webhook.signatureScheme);
    if (!secret) {
      throw new ApiError(
        'operation_not_supported',
        `the ${webhook.signatureScheme} provider issues this secret: set its new value with PUT /secrets/${webhook.secretName}, then disable and enable the webhook`,
      );
    }
    const now = new Date();
    await this.dataSource.transaction(async (manager) => {
      await this.secrets.update(principal, webhook.secretName, { value: secret }, manager);
      await this.store.update(manager, webhook.id, {
        secretCiphertext: this.cipher.encrypt(secret, factory.teamId),
        secretUpdatedAt: now,
      });
      await this.audit.record(manager, principal, 'webhook.rotate_secret', target, {
        factory_id: factory.id,
        secret_name: webhook.secretName,
      });
    });
    return { webhook: { ...webhook, secretUpdatedAt: now, updatedAt: now }, secret };
  }

  /** Senders get 404 from now on; automations selecting it stay and never fire. */
  async remove(principal: Principal, factoryUid: string, webhookUid: string): Promise<void> {
    const { factory, webhook } = await this.get(principal, factoryUid, webhookUid);
    const target = webhookTarget(webhook.id);
    await this.assertManager(principal, factory, 'webhook.delete', target);
    assertManaged(factory);
    const files = (await this.currentFiles(factory)).filter(
      (f) => f.path !== `webhooks/${webhook.name}.yaml`,
    );
    const result = await this.applier.apply(factory.id, files, {
      events: () => [
        this.audit.entry(principal, 'webhook.delete', target, {
          factory_id: factory.id,
          name: webhook.name,
        }),
      ],
    });
    if (!result.applied) throw new DefinitionRefused(result.diagnostics);
  }

  private async manageable(
    principal: Principal,
    factoryUid: string,
    action: string,
  ): Promise<Factory> {
    const factory = await this.factories.get(principal.teamId, factoryUid);
    await this.assertManager(principal, factory, action, { type: 'factory', id: factory.id });
    assertManaged(factory);
    return factory;
  }

  /** assertCanManage, with a refusal recorded in the audit log. */
  private assertManager(
    principal: Principal,
    factory: Factory,
    action: string,
    target: { type: string; id: string },
  ): Promise<void> {
    return this.audit.deniedOn(principal, action, target, () =>
      assertCanManage(principal, factory),
    );
  }

  private async currentFiles(factory: Factory) {
    return (await this.factories.files(factory.id)).map((f) => ({
      path: f.path,
      content: f.content,
    }));
  }

  private applied(result: ApplyResult, name: string): Webhook {
    if (!result.applied) throw new DefinitionRefused(result.diagnostics);
    return result.webhooks.find((w) => w.name === name)!;
  }
}

function webhookTarget(id: string) {
  return { type: 'webhook', id };
}
