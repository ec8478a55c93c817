import { HarnessTypes } from '../../run-config';
import { SignatureVerifierRegistry } from '../verifiers/signature-verifier-registry';
import { definitionVocabulary } from './definition/definition-vocabulary';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { newUid } from '../../../common/ids';
import type { AuditEvent } from '../../audit';
import { AuditLog } from '../../audit';
import { ModelsService } from '../../models';
import { SecretCipher, TeamSecretsService } from '../../secrets';
import { Webhook } from '../entities/webhook.entity';
import { WebhookStore } from '../webhook-store.repository';
import { AutomationStore } from './automation-store.repository';
import { parseDefinition } from './definition/definition-parser';
import { DefinitionFile, ParsedDefinition } from './definition/definition.types';
import { Diagnostic, sortDiagnostics } from './definition/diagnostics';
import { mergeExecution } from './definition/execution-settings';
import { checkAgainstState } from './definition/state-checks';
import { Factory } from './entities/factory.entity';
import { FactoryFileStore } from './factory-file-store.repository';
import { FactoryStore } from './factory-store.repository';

export type ApplyResult =
  | {
      applied: true;
      factory: Factory;
      webhooks: Webhook[];
      /** Problems that do not refuse the definition (a model that is not enabled). */
      warnings: Diagnostic[];
    }
  | { applied: false; diagnostics: Diagnostic[] };

export interface ApplyOptions {
  /** Inserted in the same transaction before applying (a factory being created). */
  create?: Factory;
  /** Runs first inside the transaction (e.g. creating the secret a new webhook names). */
  prepare?: (manager: EntityManager) => Promise<void>;
  commit?: string | null;
  /** The audit events of the change, written in its transaction once the definition applies. */
  events?: (applied: { factory: Factory; webhooks: Webhook[] }) => AuditEvent[];
}

/** Raised inside the transaction to roll everything back when the definition is invalid. */
class InvalidDefinition extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super('invalid definition');
  }
}

/**
 * Makes a set of files a factory's definition: parses and checks everything first, and only when
 * there is no problem at all writes webhooks, automations, files and settings in one transaction.
 * An invalid definition changes nothing (the transaction, `prepare` included, rolls back).
 */
@Injectable()
export class DefinitionApplier {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly factories: FactoryStore,
    private readonly factoryFiles: FactoryFileStore,
    private readonly webhooks: WebhookStore,
    private readonly automations: AutomationStore,
    private readonly secrets: TeamSecretsService,
    private readonly cipher: SecretCipher,
    private readonly models: ModelsService,
    private readonly harnessTypes: HarnessTypes,
    private readonly verifiers: SignatureVerifierRegistry,
    private readonly audit: AuditLog,
  ) {}

  async apply(
    factoryId: string,
    files: DefinitionFile[],
    options: ApplyOptions = {},
  ): Promise<ApplyResult> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        if (options.create) await this.factories.insert(manager, options.create);
        const factory = await this.factories.lockLive(manager, factoryId);
        await options.prepare?.(manager);
        const parsed = parseDefinition(files, {
          strictPaths: factory.source === 'managed',
          vocabulary: definitionVocabulary(this.harnessTypes, this.verifiers),
        });
        const existing = await this.webhooks.listAll(factory.id, manager);
        // The state checks also judge the valid files of an invalid definition, so one apply
        // reports every problem.
        const state = await checkAgainstState(parsed.checkable, {
          manager,
          teamId: factory.teamId,
          existingWebhooks: existing,
          managed: factory.source === 'managed',
          secrets: this.secrets,
          models: this.models,
          verifiers: this.verifiers,
        });
        if (!parsed.definition || state.diagnostics.length) {
          throw new InvalidDefinition(
            sortDiagnostics([...parsed.diagnostics, ...state.diagnostics]),
          );
        }
        const webhooks = await this.writeWebhooks(
          manager,
          factory,
          parsed.definition,
          existing,
          state.secretValues,
        );
        await this.writeAutomations(manager, factory, parsed.definition);
        await this.factoryFiles.replace(manager, factory.id, parsed.definition.files);
        const now = new Date();
        Object.assign(factory, {
          name: parsed.definition.factory.name,
          description: parsed.definition.factory.description,
          settings: parsed.definition.factory.raw,
          appliedCommit: options.commit ?? null,
          appliedAt: now,
          updatedAt: now,
        });
        await this.factories.save(manager, factory);
        if (options.events) await this.audit.insert(manager, options.events({ factory, webhooks }));
        return {
          applied: true as const,
          factory,
          webhooks,
          warnings: sortDiagnostics(state.warnings),
        };
      });
    } catch (err) {
      if (err instanceof InvalidDefinition) return { applied: false, diagnostics: err.diagnostics };
      throw err;
    }
  }

  /** Takes a new snapshot of every live webhook's team secret. */
  private async writeWebhooks(
    manager: EntityManager,
    factory: Factory,
    definition: ParsedDefinition,
    existing: Webhook[],
    secretValues: Map<string, string>,
  ): Promise<Webhook[]> {
    const live = new Map(existing.filter((w) => !w.deletedAt).map((w) => [w.name, w]));
    const now = new Date();
    const result: Webhook[] = [];
    for (const spec of definition.webhooks) {
      const value = secretValues.get(spec.name)!;
      const current = live.get(spec.name);
      const fields = {
        authMode: spec.authMode,
        signatureScheme: spec.signatureScheme,
        secretName: spec.secretName,
        deliveryIdHeader: spec.deliveryIdHeader,
        enabled: spec.enabled,
        secretCiphertext: this.cipher.encrypt(value, factory.teamId),
      };
      if (current) {
        const changed = this.snapshotValue(current, factory.teamId) !== value;
        const update = { ...fields, secretUpdatedAt: changed ? now : current.secretUpdatedAt };
        await this.webhooks.update(manager, current.id, update);
        result.push({ ...current, ...update, updatedAt: now });
      } else {
        const webhook: Webhook = {
          id: newUid(),
          teamId: factory.teamId,
          factoryId: factory.id,
          name: spec.name,
          ...fields,
          secretUpdatedAt: now,
          createdAt: now,
          updatedAt: now,
          deletedAt: null,
        };
        await this.webhooks.insert(manager, webhook);
        result.push(webhook);
      }
    }
    const names = new Set(definition.webhooks.map((w) => w.name));
    await this.webhooks.softDelete(
      manager,
      [...live.values()].filter((w) => !names.has(w.name)).map((w) => w.id),
    );
    return result;
  }

  private snapshotValue(webhook: Webhook, teamId: string): string | null {
    try {
      return this.cipher.decrypt(webhook.secretCiphertext, teamId);
    } catch {
      return null; // unreadable (the key changed): the new snapshot replaces it
    }
  }

  private async writeAutomations(
    manager: EntityManager,
    factory: Factory,
    definition: ParsedDefinition,
  ) {
    const foreman = definition.agents.find(
      (a) => a.agentType === 'FOREMAN' || a.agentType === 'MAIN',
    );
    const specs = definition.automations.map((spec) => {
      const agent = spec.agent ? definition.agents.find((a) => a.name === spec.agent) : foreman;
      const execution = mergeExecution(
        definition.factory.agentDefaults,
        agent?.execution,
        spec.execution,
      );
      return {
        spec,
        execution: agent?.prompt ? { ...execution, basePrompt: agent.prompt } : execution,
      };
    });
    await this.automations.replace(manager, factory, specs);
  }
}
