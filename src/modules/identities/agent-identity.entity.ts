import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';
import { Team, User } from '../teams';
import type { AgentSettings } from './agent-settings';

/**
 * An agent identity: a service-account user (`users.type = 'service_account'`, same id) with
 * its agent settings. Deleting one is soft (runs keep showing their executor) and deletes its
 * API keys in the same transaction.
 */
@Entity('agent_identities')
@Index('idx_agent_identities_team', ['teamId', 'deletedAt', 'createdAt', 'uid'])
export class AgentIdentity {
  @PrimaryColumn({ name: 'user_id', ...asciiId(22) })
  @ForeignKey(() => User, { name: 'fk_agent_identities_user', onDelete: 'CASCADE' })
  uid: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  @ForeignKey(() => Team, { name: 'fk_agent_identities_team', onDelete: 'CASCADE' })
  teamId: string;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ name: 'factory_uid', type: 'varchar', length: 64, nullable: true })
  factoryUid: string | null;

  @Column({ type: 'json' })
  settings: AgentSettings;

  @Column({ name: 'created_by', ...asciiId(22), nullable: true })
  createdBy: string | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt: Date;

  @Column({ name: 'deleted_at', type: 'datetime', precision: 3, nullable: true })
  deletedAt: Date | null;
}
