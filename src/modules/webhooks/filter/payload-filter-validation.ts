import { isOperatorObject, isPlainObject, OPERATORS } from './payload-filter';

export const FILTER_LIMITS = { maxDepth: 8, maxKeys: 200, maxValuesPerList: 100, maxValues: 1000 };

export interface FilterProblem {
  /** Keys from the filter's root to the offending value. */
  path: (string | number)[];
  message: string;
}

/** Checks a payload filter's shape and size; returns every problem (empty = valid). */
export function validatePayloadFilter(filter: unknown): FilterProblem[] {
  const problems: FilterProblem[] = [];
  if (!isPlainObject(filter)) {
    return [{ path: [], message: 'payload must be an object that mirrors the delivery body' }];
  }
  const counts = { keys: 0, values: 0 };
  checkObject(filter, [], 1, problems, counts);
  if (counts.keys > FILTER_LIMITS.maxKeys) {
    problems.push({
      path: [],
      message: `has ${counts.keys} keys; at most ${FILTER_LIMITS.maxKeys}`,
    });
  }
  if (counts.values > FILTER_LIMITS.maxValues) {
    problems.push({
      path: [],
      message: `lists ${counts.values} values; at most ${FILTER_LIMITS.maxValues}`,
    });
  }
  return problems;
}

function checkObject(
  filter: Record<string, unknown>,
  path: (string | number)[],
  depth: number,
  problems: FilterProblem[],
  counts: { keys: number; values: number },
): void {
  if (depth > FILTER_LIMITS.maxDepth) {
    problems.push({ path, message: `nests deeper than ${FILTER_LIMITS.maxDepth} levels` });
    return;
  }
  for (const [key, condition] of Object.entries(filter)) {
    counts.keys++;
    const here = [...path, key];
    if (key.length === 0 || key.length > 256) {
      problems.push({ path: here, message: 'keys must be 1-256 characters' });
    }
    if (Array.isArray(condition)) {
      checkList(condition, here, problems, counts);
    } else if (isOperatorObject(condition)) {
      checkOperators(condition as Record<string, unknown>, here, problems, counts);
    } else if (isPlainObject(condition)) {
      const keys = Object.keys(condition);
      const ops = keys.filter((k) => (OPERATORS as readonly string[]).includes(k));
      if (keys.length === 0) {
        problems.push({ path: here, message: 'an empty object matches nothing useful; remove it' });
      } else if (ops.length > 0) {
        problems.push({
          path: here,
          message: `mixes operators (${ops.join(', ')}) with field names; use one or the other`,
        });
      } else {
        checkObject(condition, here, depth + 1, problems, counts);
      }
    } else if (!isScalar(condition)) {
      problems.push({
        path: here,
        message: 'must be a list, a value, an operator object or an object',
      });
    } else {
      counts.values++;
    }
  }
}

function checkOperators(
  condition: Record<string, unknown>,
  path: (string | number)[],
  problems: FilterProblem[],
  counts: { keys: number; values: number },
): void {
  for (const op of ['in', 'not_in'] as const) {
    if (condition[op] === undefined) continue;
    if (!Array.isArray(condition[op])) {
      problems.push({ path: [...path, op], message: `${op} must be a list of values` });
    } else {
      checkList(condition[op] as unknown[], [...path, op], problems, counts);
    }
  }
  if (condition.exists !== undefined && typeof condition.exists !== 'boolean') {
    problems.push({ path: [...path, 'exists'], message: 'exists must be true or false' });
  }
}

function checkList(
  list: unknown[],
  path: (string | number)[],
  problems: FilterProblem[],
  counts: { keys: number; values: number },
): void {
  if (list.length === 0) problems.push({ path, message: 'must list at least one value' });
  if (list.length > FILTER_LIMITS.maxValuesPerList) {
    problems.push({
      path,
      message: `lists ${list.length} values; at most ${FILTER_LIMITS.maxValuesPerList}`,
    });
  }
  counts.values += list.length;
  list.forEach((value, i) => {
    if (!isScalar(value)) {
      problems.push({
        path: [...path, i],
        message: 'values must be strings, numbers, booleans or null',
      });
    }
  });
}

function isScalar(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}
