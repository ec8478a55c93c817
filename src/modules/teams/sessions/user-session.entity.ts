import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../../database/column-types';
import { User } from '../user.entity';

/** A signed-in browser: the console's session, found by the SHA-256 of its cookie. */
@Entity('user_sessions')
@Index('ix_user_sessions_user', ['userId'])
@Index('ix_user_sessions_expires', ['expiresAt'])
export class UserSession {
  /** Hex SHA-256 of the session cookie's value (the value itself is never stored). */
  @PrimaryColumn(asciiId(64))
  id: string;

  @Column({ name: 'user_id', ...asciiId(22) })
  @ForeignKey(() => User, { name: 'fk_user_sessions_user', onDelete: 'CASCADE' })
  userId: string;

  @Column({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  /** What state-changing calls must send as `x-csrf-token` (also the `ambient_csrf` cookie). */
  @Column({ name: 'csrf_token', ...asciiId(64) })
  csrfToken: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt: Date;
}
