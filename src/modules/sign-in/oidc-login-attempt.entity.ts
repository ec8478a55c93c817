import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A sign-in under way: what the callback needs to finish it, used once, for 10 minutes. */
@Entity('oidc_login_attempts')
export class OidcLoginAttempt {
  /** The `state` sent to the provider (also in the browser's `ambient_oidc_state` cookie). */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  state: string;

  @Column({ name: 'code_verifier', type: 'varchar', length: 128 })
  codeVerifier: string;

  @Column({ type: 'varchar', length: 64 })
  nonce: string;

  /** The console path to land on once signed in. */
  @Column({ name: 'return_to', type: 'varchar', length: 512 })
  returnTo: string;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt: Date;
}
