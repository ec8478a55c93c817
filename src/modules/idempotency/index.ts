/** What other modules may use of idempotency/: they import it from here only (ESLint rule ambient/import-through-index). */
export { claimLost, markRecorded } from './idempotency-claim';
export {
  answersStatement,
  lockAnswers,
  recordAnswersInTransaction,
} from './idempotency-answers.repository';
export type { IdempotencyClaim, IdempotentAnswer } from './idempotency-claim';
export { CurrentIdempotencyClaim, Idempotent } from './idempotent.decorator';
export { IdempotencyGate } from './idempotency-gate';
export type { IdempotentRequest } from './idempotency-gate';
