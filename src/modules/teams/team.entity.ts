import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';

@Entity('teams')
@Index('uq_teams_name', ['name'], { unique: true })
export class Team {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ type: 'varchar', length: 128 })
  name: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  /** How many agent identities the team may have; null: the server's default (TeamsService.agentLimit). */
  @Column({ name: 'agent_limit', type: 'int', nullable: true })
  agentLimit?: number | null;
}
