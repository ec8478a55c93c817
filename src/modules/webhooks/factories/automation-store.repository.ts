import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager, In } from 'typeorm';
import { newUid } from '../../../common/ids';
import { AutomationSpec } from './definition/definition.types';
import { ExecutionSettings } from './definition/execution-settings';
import { Automation, AutomationWebhookTrigger } from './entities/automation.entity';

export type ResolvedExecution = ExecutionSettings & { basePrompt?: string };

/** A factory's automations, and which webhook UIDs each one listens to. */
@Injectable()
export class AutomationStore {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  list(factoryId: string): Promise<Automation[]> {
    return this.dataSource
      .getRepository(Automation)
      .find({ where: { factoryId }, order: { name: 'ASC' } });
  }

  async nameOf(id: string): Promise<string | null> {
    return (await this.dataSource.getRepository(Automation).findOneBy({ id }))?.name ?? null;
  }

  findByName(factoryId: string, name: string): Promise<Automation | null> {
    return this.dataSource.getRepository(Automation).findOneBy({ factoryId, name });
  }

  /** Enabled automations of the webhook's factory whose triggers list the webhook. */
  listeningTo(webhookId: string, factoryId: string): Promise<Automation[]> {
    return this.dataSource
      .getRepository(Automation)
      .createQueryBuilder('a')
      .innerJoin(AutomationWebhookTrigger, 't', 't.automation_id = a.id')
      .where('t.webhook_id = :webhookId AND a.factory_id = :factoryId AND a.enabled = 1', {
        webhookId,
        factoryId,
      })
      .orderBy('a.name', 'ASC')
      .getMany();
  }

  /** Replaces the factory's automations; an automation keeps its id while its name stays. */
  async replace(
    manager: EntityManager,
    factory: { id: string; teamId: string },
    specs: { spec: AutomationSpec; execution: ResolvedExecution }[],
  ): Promise<Automation[]> {
    const repo = manager.getRepository(Automation);
    const existing = new Map(
      (await repo.findBy({ factoryId: factory.id })).map((a) => [a.name, a]),
    );
    const now = new Date();
    const kept: Automation[] = specs.map(({ spec, execution }) => ({
      id: existing.get(spec.name)?.id ?? newUid(),
      teamId: factory.teamId,
      factoryId: factory.id,
      name: spec.name,
      enabled: spec.enabled,
      agent: spec.agent,
      prompt: spec.prompt,
      triggers: spec.triggers.map((t) => ({
        provider: 'webhook',
        event: 'received',
        webhook_ids: t.webhookIds,
        payload: t.payload,
      })),
      execution,
      createdAt: existing.get(spec.name)?.createdAt ?? now,
      updatedAt: now,
    }));
    const removed = [...existing.values()].filter(
      (a) => !specs.some((s) => s.spec.name === a.name),
    );
    if (removed.length) await repo.delete({ id: In(removed.map((a) => a.id)) });
    const triggers = manager.getRepository(AutomationWebhookTrigger);
    if (existing.size)
      await triggers.delete({ automationId: In([...existing.values()].map((a) => a.id)) });
    if (kept.length) {
      // JSON columns defeat TypeORM's deep-partial typing; the rows are complete entities.
      await repo.upsert(kept as never[], ['id']);
      const rows = kept.flatMap((a) =>
        [...new Set(a.triggers.flatMap((t) => t.webhook_ids))].map((webhookId) => ({
          webhookId,
          automationId: a.id,
        })),
      );
      if (rows.length) await triggers.insert(rows);
    }
    return kept;
  }
}
