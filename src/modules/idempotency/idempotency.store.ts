import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newUuid } from '../../common/ids';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { IdempotencyClaim, storedBody } from './idempotency-claim';

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
  principalId: string;
  key: string;
}

export type ClaimOutcome =
  | { kind: 'claimed'; claim: IdempotencyClaim }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'mismatch' }
  | { kind: 'in_flight'; retryAfterSeconds: number };

interface KeyRow {
  request_digest: string;
  claim_token: string;
  claimed_until: Date | null;
  response_status: number | null;
  response_body: string | null;
  expires_at: Date;
}

/** The `idempotency_keys` table: claims, answers, and their expiry. */
@Injectable()
export class IdempotencyStore {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
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
    const where = [scope.teamId, scope.principalId, scope.key];
    for (let round = 0; round < CLAIM_ROUNDS; round += 1) {
      const now = new Date();
      const claim: IdempotencyClaim = { ...scope, token: newUuid(), recordedInTransaction: false };
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
           expires_at FROM idempotency_keys
         WHERE team_id = ? AND principal_id = ? AND idem_key = ?`,
        where,
      )) as KeyRow[];
      if (!row) continue; // released or swept meanwhile
      const lapsed = row.response_status === null && (row.claimed_until?.getTime() ?? 0) <= +now;
      if (row.expires_at.getTime() <= now.getTime() || lapsed) {
        const taken = (await this.dataSource.query(
          `UPDATE idempotency_keys SET request_digest = ?, claim_token = ?, claimed_until = ?,
             created_at = ?, expires_at = ?, response_status = NULL, response_body = NULL
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
    const result = (await this.dataSource.query(
      `UPDATE idempotency_keys SET response_status = ?, response_body = ?, claimed_until = NULL
       WHERE team_id = ? AND principal_id = ? AND idem_key = ? AND claim_token = ?`,
      [status, storedBody(body), claim.teamId, claim.principalId, claim.key, claim.token],
    )) as { affectedRows: number };
    return result.affectedRows === 1;
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
