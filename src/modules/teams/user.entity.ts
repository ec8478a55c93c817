import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import type { TeamRole } from '../../common/auth/roles';
import { asciiId, exactText } from '../../database/column-types';
import { Team } from './team.entity';

import type { UserType } from '../../common/auth/principal';

export type { UserType };
export type UserRole = TeamRole;

@Entity('users')
@Index('idx_users_team', ['teamId'])
@Index('uq_users_oidc_subject', ['oidcIssuer', 'oidcSubject'], { unique: true })
export class User {
  @PrimaryColumn(asciiId(22))
  id: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  @ForeignKey(() => Team, { name: 'fk_users_team', onDelete: 'CASCADE' })
  teamId: string;

  @Column({ name: 'display_name', type: 'varchar', length: 255 })
  displayName: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  email: string | null;

  @Column({ type: 'varchar', length: 16, default: 'user' })
  type: UserType;

  @Column({ type: 'varchar', length: 16, default: 'member' })
  role: UserRole;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  /** A person signed in through an OpenID provider: its issuer and subject (unique together). */
  @Column({ name: 'oidc_issuer', ...exactText(255), nullable: true })
  oidcIssuer?: string | null;

  @Column({ name: 'oidc_subject', ...exactText(255), nullable: true })
  oidcSubject?: string | null;

  @Column({ name: 'last_sign_in_at', type: 'datetime', precision: 3, nullable: true })
  lastSignInAt?: Date | null;

  /** Deleted (an agent identity) or deactivated (a person, by SCIM): nothing of theirs works. */
  @Column({ name: 'deleted_at', type: 'datetime', precision: 3, nullable: true })
  deletedAt?: Date | null;
}
