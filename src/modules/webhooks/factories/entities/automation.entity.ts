import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { PayloadFilter } from '../../filter/payload-filter';
import type { ExecutionSettings } from '../definition/execution-settings';

export interface StoredTrigger {
  provider: 'webhook';
  event: 'received';
  webhook_ids: string[];
  payload: PayloadFilter | null;
}

/** An automation of a factory: its webhook triggers, execution overrides and prompt. */
@Entity('automations')
export class Automation {
  @PrimaryColumn({ type: 'varchar', length: 22 })
  id: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @Column({ name: 'factory_id', type: 'varchar', length: 22 })
  factoryId: string;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ type: 'varchar', length: 128, nullable: true })
  agent: string | null;

  @Column({ type: 'mediumtext' })
  prompt: string;

  @Column({ type: 'json' })
  triggers: StoredTrigger[];

  /** Resolved execution: factory defaults ← agent ← automation, plus the agent's base prompt. */
  @Column({ type: 'json' })
  execution: ExecutionSettings & { basePrompt?: string };

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}

@Entity('automation_webhook_triggers')
export class AutomationWebhookTrigger {
  @PrimaryColumn({ name: 'webhook_id', type: 'varchar', length: 22 })
  webhookId: string;

  @PrimaryColumn({ name: 'automation_id', type: 'varchar', length: 22 })
  automationId: string;
}
