import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';

/** A sign-in under way: what the callback needs to finish it, used once, for 10 minutes. */
@Entity('oidc_login_attempts')
@Index('ix_oidc_login_attempts_expires', ['expiresAt'])
export class OidcLoginAttempt {
  /** The `state` sent to the provider (also in the browser's `ambient_oidc_state` cookie). */
  @PrimaryColumn(asciiId(64))
  state: string;

  @Column({ name: 'code_verifier', ...asciiId(128) })
  codeVerifier: string;

  @Column(asciiId(64))
  nonce: string;

  /** The console path to land on once signed in. */
  @Column({ name: 'return_to', type: 'varchar', length: 512 })
  returnTo: string;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt: Date;
}
