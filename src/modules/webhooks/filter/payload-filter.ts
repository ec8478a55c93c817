/**
 * The payload filter of a webhook trigger. The filter mirrors the shape of the delivery body:
 * every key must match. A key's condition is
 *   - a list (or one scalar): the field's value must be one of them (`in`);
 *   - an operator object `{in?, not_in?, exists?}` (every operator given must hold);
 *   - any other object: a nested filter for the nested field.
 * Rules the Oz docs leave open, described in
 * docs/webhooks-and-factories.md "Payload filters and definition limits":
 *   - a missing field fails `in`, passes `not_in`; `exists` says whether the key is present
 *     (a `null` value is present);
 *   - an array field matches `in` when any element is listed and `not_in` when none is, and a
 *     nested filter when any object element matches;
 *   - values compare by JSON type and value, without coercion ("1" ≠ 1);
 *   - a body that is an array is matched element by element (any element).
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };
export type JsonScalar = null | boolean | number | string;
export type PayloadFilter = { [key: string]: FilterCondition };
export type FilterCondition = JsonScalar | JsonScalar[] | OperatorCondition | PayloadFilter;
export interface OperatorCondition {
  in?: JsonScalar[];
  not_in?: JsonScalar[];
  exists?: boolean;
}

export const OPERATORS = ['in', 'not_in', 'exists'] as const;

export interface FilterOutcome {
  matched: boolean;
  /** Dotted path of the first key that failed, e.g. `deployment.env`. */
  failedKey?: string;
  reason?: string;
}

const MISSING = Symbol('missing');
type Field = JsonValue | typeof MISSING;

export function isOperatorObject(value: unknown): value is OperatorCondition {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return keys.length > 0 && keys.every((k) => (OPERATORS as readonly string[]).includes(k));
}

export function matchPayload(
  filter: PayloadFilter | null | undefined,
  body: JsonValue,
): FilterOutcome {
  if (!filter) return { matched: true };
  return matchObject(filter, body, '');
}

function matchObject(filter: PayloadFilter, value: Field, prefix: string): FilterOutcome {
  if (Array.isArray(value)) {
    const objects = value.filter(isPlainObject);
    if (objects.length === 0) return matchObject(filter, MISSING, prefix);
    let first: FilterOutcome | undefined;
    for (const element of objects) {
      const outcome = matchObject(filter, element, prefix);
      if (outcome.matched) return outcome;
      first ??= outcome;
    }
    return { ...first!, reason: `no element of the array matched: ${first!.reason}` };
  }
  const object = isPlainObject(value) ? value : undefined;
  for (const [key, condition] of Object.entries(filter)) {
    const path = prefix ? `${prefix}.${key}` : key;
    const field: Field = object && Object.hasOwn(object, key) ? object[key] : MISSING;
    const outcome = matchCondition(condition, field, path);
    if (!outcome.matched) return outcome;
  }
  return { matched: true };
}

function matchCondition(condition: FilterCondition, field: Field, path: string): FilterOutcome {
  if (Array.isArray(condition) || !isPlainObject(condition)) {
    return matchIn(
      (Array.isArray(condition) ? condition : [condition]) as JsonScalar[],
      field,
      path,
    );
  }
  if (isOperatorObject(condition)) {
    if (condition.exists !== undefined) {
      const present = field !== MISSING;
      if (present !== condition.exists) {
        return fail(path, condition.exists ? 'the field is missing' : 'the field is present');
      }
    }
    if (condition.in !== undefined) {
      const outcome = matchIn(condition.in as JsonScalar[], field, path);
      if (!outcome.matched) return outcome;
    }
    if (condition.not_in !== undefined) {
      const notIn = condition.not_in as JsonScalar[];
      const hit = valuesOf(field).find((v) => notIn.some((c) => sameJson(v, c)));
      if (hit !== undefined) {
        return fail(path, `value ${JSON.stringify(hit)} is listed in not_in`);
      }
    }
    return { matched: true };
  }
  return matchObject(condition as PayloadFilter, field, path);
}

function matchIn(allowed: JsonScalar[], field: Field, path: string): FilterOutcome {
  if (field === MISSING) return fail(path, 'the field is missing');
  if (valuesOf(field).some((v) => allowed.some((a) => sameJson(v, a)))) return { matched: true };
  return fail(path, `value ${JSON.stringify(field)} is not one of ${JSON.stringify(allowed)}`);
}

/** The values a field offers for comparison: its elements when it is an array. */
function valuesOf(field: Field): JsonValue[] {
  if (field === MISSING) return [];
  return Array.isArray(field) ? field : [field];
}

/** Same JSON type and value: no coercion between strings, numbers and booleans. */
function sameJson(a: JsonValue, b: JsonScalar): boolean {
  return a === b;
}

function fail(failedKey: string, reason: string): FilterOutcome {
  return { matched: false, failedKey, reason };
}

export function isPlainObject(value: unknown): value is { [k: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
