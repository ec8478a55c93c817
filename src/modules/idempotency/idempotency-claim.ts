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

/** Marks the claims as answered once the transaction that recorded their answers committed. */
export function markRecorded(answers: IdempotentAnswer[]): void {
  for (const answer of answers) answer.claim.recordedInTransaction = true;
}
