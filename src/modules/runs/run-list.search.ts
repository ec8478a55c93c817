import { UUID_PATTERN } from '../../common/ids';

/** InnoDB's default innodb_ft_min/max_token_size: other words are never indexed. */
const MIN_TOKEN_CHARS = 3;
const MAX_TOKEN_CHARS = 84;
/** InnoDB's default stopword list: such words are not indexed, so requiring one matches nothing. */
const STOPWORDS = new Set(
  (
    'a about an are as at be by com de en for from how i in is it la of on or that the this to ' +
    'was what when where who will with und www'
  ).split(' '),
);

export interface RunSearch {
  /** A run id the search names directly (a UUID or a run URL), lower-cased. */
  runId: string | null;
  /** A BOOLEAN MODE full-text expression, or null when no word is usable. */
  fullText: string | null;
}

/**
 * Turns `q` into an exact run id (for a UUID or a URL ending in one) and a full-text expression
 * that requires every usable word as a prefix. Boolean operators in the input are dropped.
 */
export function buildRunSearch(q: string): RunSearch {
  const words = q
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((word) => isIndexedWord(word));
  const unique = [...new Set(words)];
  return {
    runId: runIdIn(q),
    fullText: unique.length ? unique.map((word) => `+${word}*`).join(' ') : null,
  };
}

function isIndexedWord(word: string): boolean {
  const length = Array.from(word).length;
  return length >= MIN_TOKEN_CHARS && length <= MAX_TOKEN_CHARS && !STOPWORDS.has(word);
}

function runIdIn(q: string): string | null {
  if (UUID_PATTERN.test(q)) return q.toLowerCase();
  let url: URL;
  try {
    url = new URL(q);
  } catch {
    return null;
  }
  const last = url.pathname.split('/').filter(Boolean).pop() ?? '';
  return UUID_PATTERN.test(last) ? last.toLowerCase() : null;
}
