import { SqlRunner, Statement, statementOf } from '../../database/raw-sql';
import { IdempotentAnswer, storedBody } from './idempotency-claim';

/*
 * The `idempotency_keys` statements that run in another module's transaction (run creation's):
 * functions on the caller's SqlRunner (an EntityManager, or a packed transaction).
 */

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
  return statementOf(
    `INSERT INTO idempotency_keys (team_id, principal_id, idem_key, request_digest, claim_token,
         claimed_until, response_status, response_body, shown_once, created_at, expires_at)
       VALUES ${kept.map(() => "(?, ?, ?, '', ?, NULL, ?, ?, ?, NOW(3), NOW(3))").join(', ')}
       ON DUPLICATE KEY UPDATE response_status = VALUES(response_status),
         response_body = VALUES(response_body), shown_once = VALUES(shown_once),
         claimed_until = NULL`,
    params,
  );
}
