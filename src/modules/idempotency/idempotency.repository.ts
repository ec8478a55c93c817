import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newUuid } from '../../common/ids';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { IdempotencyClaim, storedBody } from './idempotency-claim';
import { SHOWN_ONCE_CIPHER, type ShownOnceCipher } from './shown-once-cipher';

/**
 * How long a request holds its key before another request with that key may take it over: the
 * holder crashed or hangs. A holder that answers later finds its claim lost (its transaction
 * records nothing: recordAnswersInTransaction).
 */
export const CLAIM_MS = 60_000;
/** Rounds of insert-or-look when other requests with the same key interleave. */
const CLAIM_ROUNDS = 3;
/** Rows one sweep statement deletes (the sweep repeats while it finds a full batch). */
const SWEEP_BATCH = 1000;
const SWEEP_ROUNDS = 100;

export interface IdempotencyScope {
  teamId: string;
  /** The credential that sent the key (IdempotencyClaim.principalId). */
  principalId: string;
  key: string;
  shownOnce?: boolean;
}

export type ClaimOutcome =
  | { kind: 'claimed'; claim: IdempotencyClaim }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'mismatch' }
  /** The answer carried a credential shown once and is not kept (or no longer decrypts). */
  | { kind: 'already_shown' }
  | { kind: 'in_flight'; retryAfterSeconds: number };

interface KeyRow {
  request_digest: string;
  claim_token: string;
  claimed_until: Date | null;
  response_status: number | null;
  response_body: string | null;
  shown_once: number;
  response_sealed: Buffer | null;
  expires_at: Date;
}

/**
 * The `idempotency_keys` table: claims, answers, and their expiry. An answer that carries a
 * credential shown once is kept encrypted (ShownOnceCipher), or not at all without a key.
 */
@Injectable()
export class IdempotencyStore {
  private readonly logger = new Logger('Idempotency');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() @Inject(SHOWN_ONCE_CIPHER) private readonly cipher?: ShownOnceCipher,
  ) {}

  private get ttlMs(): number {
    return Math.round(this.config.idempotency.ttlHours * 3_600_000);
  }

  /**
   * Takes the key for this request, or says why not: the same request was answered (replay),
   * another request used the key (mismatch), or a request with it is still in flight. A key that
   * expired, or whose holder lapsed without an answer, is taken over.
   */
  async claim(scope: IdempotencyScope, digest: string): Promise<ClaimOutcome> {
    const { shownOnce, ...keyScope } = scope;
    const where = [scope.teamId, scope.principalId, scope.key];
    for (let round = 0; round < CLAIM_ROUNDS; round += 1) {
      const now = new Date();
      const claim: IdempotencyClaim = {
        ...keyScope,
        token: newUuid(),
        recordedInTransaction: false,
        ...(shownOnce ? { shownOnce } : {}),
      };
      const fresh = [
        digest,
        claim.token,
        new Date(now.getTime() + CLAIM_MS),
        now,
        this.expiry(now),
      ];
      try {
        await this.dataSource.query(
          `INSERT INTO idempotency_keys (team_id, principal_id, idem_key, request_digest,
             claim_token, claimed_until, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          [...where, ...fresh],
        );
        return { kind: 'claimed', claim };
      } catch (err) {
        if ((err as { code?: string }).code !== 'ER_DUP_ENTRY') throw err;
      }
      const [row] = (await this.dataSource.query(
        `SELECT request_digest, claim_token, claimed_until, response_status, response_body,
           shown_once, response_sealed, expires_at FROM idempotency_keys
         WHERE team_id = ? AND principal_id = ? AND idem_key = ?`,
        where,
      )) as KeyRow[];
      if (!row) continue; // released or swept meanwhile
      const lapsed = row.response_status === null && (row.claimed_until?.getTime() ?? 0) <= +now;
      if (row.expires_at.getTime() <= now.getTime() || lapsed) {
        const taken = (await this.dataSource.query(
          `UPDATE idempotency_keys SET request_digest = ?, claim_token = ?, claimed_until = ?,
             created_at = ?, expires_at = ?, response_status = NULL, response_body = NULL,
             shown_once = 0, response_sealed = NULL
           WHERE team_id = ? AND principal_id = ? AND idem_key = ? AND claim_token = ?
             AND (expires_at <= ? OR (response_status IS NULL AND claimed_until <= ?))`,
          // Conditions re-checked in the statement: the holder may have answered meanwhile.
          [...fresh, ...where, row.claim_token, now, now],
        )) as { affectedRows: number };
        if (taken.affectedRows === 1) return { kind: 'claimed', claim };
        continue;
      }
      if (row.request_digest !== digest) return { kind: 'mismatch' };
      if (row.response_status === null) {
        const left = (row.claimed_until?.getTime() ?? 0) - now.getTime();
        return {
          kind: 'in_flight',
          retryAfterSeconds: Math.min(5, Math.max(1, Math.ceil(left / 1000))),
        };
      }
      if (row.shown_once) {
        const body = this.unsealed(row.response_sealed, scope.teamId);
        if (body === null) return { kind: 'already_shown' };
        return { kind: 'replay', status: row.response_status, body: JSON.parse(body) as unknown };
      }
      return {
        kind: 'replay',
        status: row.response_status,
        body: row.response_body === null ? undefined : (JSON.parse(row.response_body) as unknown),
      };
    }
    return { kind: 'in_flight', retryAfterSeconds: 1 };
  }

  /** Stores the answer of a request whose work committed on its own (not with the key). */
  async complete(claim: IdempotencyClaim, status: number, body: unknown): Promise<boolean> {
    const text = storedBody(body);
    const [plain, sealed] = claim.shownOnce
      ? [null, this.sealed(text, claim.teamId)]
      : [text, null];
    const result = (await this.dataSource.query(
      `UPDATE idempotency_keys SET response_status = ?, response_body = ?, shown_once = ?,
         response_sealed = ?, claimed_until = NULL
       WHERE team_id = ? AND principal_id = ? AND idem_key = ? AND claim_token = ?`,
      [
        status,
        plain,
        claim.shownOnce ? 1 : 0,
        sealed,
        claim.teamId,
        claim.principalId,
        claim.key,
        claim.token,
      ],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
  }

  /** A shown-once body encrypted, or null when the server has no key (it is not kept). */
  private sealed(text: string | null, teamId: string): Buffer | null {
    return text !== null && this.cipher?.enabled ? this.cipher.encrypt(text, teamId) : null;
  }

  private unsealed(sealed: Buffer | null, teamId: string): string | null {
    if (!sealed || !this.cipher?.enabled) return null;
    try {
      return this.cipher.decrypt(Buffer.from(sealed), teamId);
    } catch (err) {
      this.logger.warn(`a shown-once answer does not decrypt: ${(err as Error).message}`);
      return null;
    }
  }

  /** Frees the key of a request that failed, unless its answer was already recorded. */
  async release(claim: IdempotencyClaim): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM idempotency_keys
       WHERE team_id = ? AND principal_id = ? AND idem_key = ? AND claim_token = ?
         AND response_status IS NULL`,
      [claim.teamId, claim.principalId, claim.key, claim.token],
    );
  }

  /** Deletes the keys past their expiry; returns how many. */
  async sweep(now = new Date()): Promise<number> {
    let deleted = 0;
    for (let round = 0; round < SWEEP_ROUNDS; round += 1) {
      const result = (await this.dataSource.query(
        `DELETE FROM idempotency_keys WHERE expires_at <= ? LIMIT ${SWEEP_BATCH}`,
        [now],
      )) as { affectedRows: number };
      deleted += result.affectedRows;
      if (result.affectedRows < SWEEP_BATCH) break;
    }
    return deleted;
  }

  private expiry(now: Date): Date {
    return new Date(now.getTime() + this.ttlMs);
  }
}
