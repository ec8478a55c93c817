import { Column, Entity, PrimaryColumn, ValueTransformer } from 'typeorm';

/** DECIMAL comes back from the driver as a string. */
const usd: ValueTransformer = {
  to: (value: number | null) => value,
  from: (value: string | null) => (value === null ? null : Number(value)),
};

/** The key of a team's own limits row. */
export const TEAM_SCOPE = '';

/** The limits of a team (`agentUid` = '') or of one of its agent identities; null = no limit. */
@Entity('run_limits')
export class RunLimits {
  @PrimaryColumn({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  @PrimaryColumn({ name: 'agent_uid', type: 'varchar', length: 22, default: TEAM_SCOPE })
  agentUid: string;

  @Column({ name: 'max_concurrent_runs', type: 'int', nullable: true })
  maxConcurrentRuns: number | null;

  @Column({
    name: 'monthly_budget_usd',
    type: 'decimal',
    precision: 18,
    scale: 6,
    nullable: true,
    transformer: usd,
  })
  monthlyBudgetUsd: number | null;

  @Column({
    name: 'max_run_cost_usd',
    type: 'decimal',
    precision: 18,
    scale: 6,
    nullable: true,
    transformer: usd,
  })
  maxRunCostUsd: number | null;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
