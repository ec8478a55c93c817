import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A signed-in browser: the console's session, found by the SHA-256 of its cookie. */
@Entity('user_sessions')
export class UserSession {
  /** Hex SHA-256 of the session cookie's value (the value itself is never stored). */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  id: string;

  @Column({ name: 'user_id', type: 'varchar', length: 22 })
  userId: string;

  @Column({ name: 'team_id', type: 'varchar', length: 22 })
  teamId: string;

  /** What state-changing calls must send as `x-csrf-token` (also the `ambient_csrf` cookie). */
  @Column({ name: 'csrf_token', type: 'varchar', length: 64 })
  csrfToken: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt: Date;
}
