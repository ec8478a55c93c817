/**
 * A JSON column's value read by a raw query: MariaDB returns the column's text (its JSON type is
 * LONGTEXT), MySQL the parsed value.
 */
export function jsonColumn<T>(value: string | T | null | undefined): T | null {
  return typeof value === 'string' ? (JSON.parse(value) as T) : (value ?? null);
}
