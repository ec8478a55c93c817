import { createHash } from 'node:crypto';

/**
 * A short hash of a list's filters, insensitive to key and value order: a cursor carries it, so
 * a cursor used with other filters than it was issued for is refused.
 */
export function filterHash(filters: object): string {
  return createHash('sha256')
    .update(JSON.stringify(canonical(filters)))
    .digest('base64url')
    .slice(0, 22);
}

function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(canonical).sort();
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => [key, canonical(record[key])]);
  }
  return value;
}
