import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';

/**
 * One `Idempotency-Key` of a credential (an API key id or `session:…`): the request's digest, the
 * claim while it runs, the answer once there is one. IdempotencyStore reads and writes it in SQL.
 */
@Entity('idempotency_keys')
@Index('ix_idempotency_keys_expires', ['expiresAt'])
export class IdempotencyKey {
  @PrimaryColumn({ name: 'team_id', ...asciiId(22) })
  teamId: string;

  @PrimaryColumn({ name: 'principal_id', ...asciiId(64) })
  principalId: string;

  @PrimaryColumn({ name: 'idem_key', ...asciiId(255) })
  key: string;

  /** SHA-256 (hex) of the first request's method, route and body. */
  @Column({
    name: 'request_digest',
    type: 'char',
    length: 64,
    charset: 'ascii',
    collation: 'ascii_bin',
  })
  requestDigest: string;

  @Column({ name: 'claim_token', ...asciiId(36) })
  claimToken: string;

  /** While no answer is stored: the claim holds until then. */
  @Column({ name: 'claimed_until', type: 'datetime', precision: 3, nullable: true })
  claimedUntil: Date | null;

  @Column({ name: 'response_status', type: 'smallint', nullable: true })
  responseStatus: number | null;

  @Column({ name: 'response_body', type: 'mediumtext', nullable: true })
  responseBody: string | null;

  /** The answer carried a credential shown once: kept only in `responseSealed`, or not at all. */
  @Column({ name: 'shown_once', type: 'boolean', default: false })
  shownOnce: boolean;

  @Column({ name: 'response_sealed', type: 'mediumblob', nullable: true })
  responseSealed: Buffer | null;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;

  @Column({ name: 'expires_at', type: 'datetime', precision: 3 })
  expiresAt: Date;
}
