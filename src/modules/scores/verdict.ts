/** A verdict as accepted: what it judged and how. */
export interface Verdict {
  criterion: string;
  classification: string | null;
  score: number | null;
  reason: string | null;
}

export type VerdictCheck = { verdict: Verdict } | { error: string };

const FIELDS = ['criterion', 'classification', 'score', 'reason'];

/**
 * Validates one verdict on its own, so a bad verdict never blocks the others: `criterion`
 * (1–100 characters), a `score` in 0..1 and/or a `classification` (1–100 characters), an
 * optional `reason` (at most 10,000 characters), nothing else. The error names the field.
 */
export function checkVerdict(raw: unknown): VerdictCheck {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    return { error: 'a verdict must be a JSON object' };
  }
  const v = raw as Record<string, unknown>;
  const unknown = Object.keys(v).find((k) => !FIELDS.includes(k));
  if (unknown) return { error: `${unknown}: is not a verdict field` };
  if (typeof v.criterion !== 'string' || v.criterion.trim() === '' || v.criterion.length > 100) {
    return { error: 'criterion: must be a non-empty string of at most 100 characters' };
  }
  if (
    v.score !== undefined &&
    v.score !== null &&
    (typeof v.score !== 'number' || !Number.isFinite(v.score) || v.score < 0 || v.score > 1)
  ) {
    return { error: 'score: must be a number from 0 to 1' };
  }
  if (
    v.classification !== undefined &&
    v.classification !== null &&
    (typeof v.classification !== 'string' ||
      v.classification.trim() === '' ||
      v.classification.length > 100)
  ) {
    return { error: 'classification: must be a non-empty string of at most 100 characters' };
  }
  if ((v.score ?? null) === null && (v.classification ?? null) === null) {
    return { error: 'score: a verdict needs a score or a classification' };
  }
  if (
    v.reason !== undefined &&
    v.reason !== null &&
    (typeof v.reason !== 'string' || v.reason.length > 10_000)
  ) {
    return { error: 'reason: must be a string of at most 10000 characters' };
  }
  return {
    verdict: {
      criterion: v.criterion.trim(),
      classification: (v.classification as string | undefined)?.trim() ?? null,
      score: (v.score as number | undefined) ?? null,
      reason: (v.reason as string | undefined) ?? null,
    },
  };
}
