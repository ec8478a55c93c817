import { ApiError } from '../../common/errors/api-error';

export const MAX_METADATA_KEYS = 20;
const KEY_PATTERN = /^[a-zA-Z0-9._-]{1,64}$/;
const MAX_VALUE_BYTES = 256;

/**
 * Checks one metadata pair against the Oz rules. `field` names the map in errors about the key,
 * `valueField` the value (`metadata.k` in a body, `metadata[k]` in a query string).
 */
export function assertMetadataPair(
  key: string,
  value: unknown,
  field: string,
  valueField = `${field}.${key}`,
): void {
  if (!KEY_PATTERN.test(key)) {
    throw ApiError.invalid(field, `key "${key}" must be 1-64 characters of [a-zA-Z0-9._-]`);
  }
  if (typeof value !== 'string') {
    throw ApiError.invalid(valueField, 'must be a string');
  }
  if (Buffer.byteLength(value, 'utf8') > MAX_VALUE_BYTES) {
    throw ApiError.invalid(valueField, `must be at most ${MAX_VALUE_BYTES} bytes of UTF-8`);
  }
  if (value.includes('\u0000')) {
    throw ApiError.invalid(valueField, 'must not contain NUL characters');
  }
}

export function assertMetadata(metadata: Record<string, unknown>, field = 'metadata'): void {
  const keys = Object.keys(metadata);
  if (keys.length > MAX_METADATA_KEYS) {
    throw ApiError.invalid(
      field,
      `at most ${MAX_METADATA_KEYS} keys are allowed (got ${keys.length})`,
    );
  }
  for (const key of keys) assertMetadataPair(key, metadata[key], field);
}
