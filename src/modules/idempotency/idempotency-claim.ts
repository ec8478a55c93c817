import { SqlRunner, Statement, valueBytes } from '../../database/raw-sql';
import { ApiError } from '../../common/errors/api-error';
import { IDEMPOTENCY_KEY_HEADER } from './idempotency-key.header';

/** A request holding its `Idempotency-Key` while it is in flight. */
export interface IdempotencyClaim {
  teamId: string;
  /** The credential that sent the key: an API key's id, or `session:…` for a console session. */
  principalId: string;
  key: string;
  /** Which request holds the key: a claim taken over after it lapsed has another token. */
  token: string;
  /** Set when the answer was written in the transaction of what the request created. */
  recordedInTransaction: boolean;
  /** The answer carries a credential shown once (Idempotent({ shownOnce: true })). */
  shownOnce?: boolean;
}

/** The answer a request with a key gives, to be replayed for the same key and request. */
export interface IdempotentAnswer {
  claim: IdempotencyClaim;
  status: number;
  body: unknown;
}

/** The stored form of an answer's body: JSON of the handler's value (NULL = no body). */
export function storedBody(body: unknown): string | null {
  return body === undefined ? null : JSON.stringify(body);
}

/** The 409 of a request whose key another request took over (this one lapsed in flight). */
export function claimLost(claim: IdempotencyClaim): ApiError {
  return new ApiError(
    'conflict',
    `${IDEMPOTENCY_KEY_HEADER} "${claim.key}": another request with this key took it over; retry to get its answer`,
    { headers: { 'Retry-After': '1' } },
  );
}

/**
 * Writes answers in the caller's transaction, so that they commit with what the requests
 * created, or not at all. Each claim is locked and checked first: the answer of a claim that
 * lapsed and was taken over by another request is not written, and its index is returned, so
 * that the caller leaves that request's work out of the transaction.
 */
export async function recordAnswersInTransaction(
  manager: SqlRunner,
  answers: IdempotentAnswer[],
): Promise<Set<number>> {
  const lost = await lockAnswers(manager, answers);
  const write = answersStatement(answers.filter((_, i) => !lost.has(i)));
  if (write) await manager.query(write.sql, write.params);
  return lost;
}

/**
 * The first half of recordAnswersInTransaction: locks the answers' claims and returns the
 * indexes of those another request took over.
 */
export async function lockAnswers(
  manager: SqlRunner,
  answers: IdempotentAnswer[],
): Promise<Set<number>> {
  const lost = new Set<number>();
  if (!answers.length) return lost;
  const held = (await manager.query(
    `SELECT team_id, principal_id, idem_key, claim_token FROM idempotency_keys
     WHERE ${answers.map(() => '(team_id = ? AND principal_id = ? AND idem_key = ?)').join(' OR ')}
     FOR UPDATE`,
    answers.flatMap(({ claim }) => [claim.teamId, claim.principalId, claim.key]),
  )) as { team_id: string; principal_id: string; idem_key: string; claim_token: string }[];
  const tokens = new Set(held.map((row) => row.claim_token));
  answers.forEach((answer, i) => {
    if (!tokens.has(answer.claim.token)) lost.add(i);
  });
  return lost;
}

/**
 * The second half: the statement writing the answers of claims still held (locked by
 * lockAnswers in the same transaction); null when there are none.
 */
export function answersStatement(kept: IdempotentAnswer[]): Statement | null {
  if (!kept.length) return null;
  // One statement for the batch: the rows exist and are locked, so only the UPDATE part runs.
  // A shown-once answer is not written here (no cipher at hand): its replay answers 409.
  const params = kept.flatMap(({ claim, status, body }) => [
    claim.teamId,
    claim.principalId,
    claim.key,
    claim.token,
    status,
    claim.shownOnce ? null : storedBody(body),
    claim.shownOnce ? 1 : 0,
  ]);
  return {
    sql: `INSERT INTO idempotency_keys (team_id, principal_id, idem_key, request_digest, claim_token,
         claimed_until, response_status, response_body, shown_once, created_at, expires_at)
       VALUES ${kept.map(() => "(?, ?, ?, '', ?, NULL, ?, ?, ?, NOW(3), NOW(3))").join(', ')}
       ON DUPLICATE KEY UPDATE response_status = VALUES(response_status),
         response_body = VALUES(response_body), shown_once = VALUES(shown_once),
         claimed_until = NULL`,
    params,
    bytes: params.reduce<number>((sum, value) => sum + valueBytes(value), 0),
  };
}

/** Marks the claims as answered once the transaction that recorded their answers committed. */
export function markRecorded(answers: IdempotentAnswer[]): void {
  for (const answer of answers) answer.claim.recordedInTransaction = true;
}
