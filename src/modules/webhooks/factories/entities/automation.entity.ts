import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId, exactText } from '../../../../database/column-types';
import { Factory } from './factory.entity';
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
@Index('uq_automations_name', ['factoryId', 'name'], { unique: true })
export class Automation {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @Column({ name: 'factory_id', ...asciiId(22) })
  @ForeignKey(() => Factory, { name: 'fk_automations_factory', onDelete: 'CASCADE' })
  factoryId: string;

  @Column(exactText(128))
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
@Index('idx_automation_webhook_triggers_automation', ['automationId'])
export class AutomationWebhookTrigger {
  @PrimaryColumn({ name: 'webhook_id', ...asciiId(22) })
  webhookId: string;

  @PrimaryColumn({ name: 'automation_id', ...asciiId(22) })
  @ForeignKey(() => Automation, { name: 'fk_awt_automation', onDelete: 'CASCADE' })
  automationId: string;
}
