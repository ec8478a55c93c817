import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A team's network policy, set by its admins (no row: the defaults). */
@Entity('team_network_policies')
export class TeamNetworkPolicy {
  @PrimaryColumn({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  /** Whether the team's environments may use `network: egress` (any outside host). */
  @Column({ name: 'egress_open_allowed', type: 'boolean', default: true })
  egressOpenAllowed: boolean;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;
}
