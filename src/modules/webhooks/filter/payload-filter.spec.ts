import { JsonValue, matchPayload, PayloadFilter } from './payload-filter';
import { validatePayloadFilter } from './payload-filter-validation';

type Row = [string, PayloadFilter | null, JsonValue, boolean, string?];

describe('matchPayload', () => {
  const deploy = { event: 'deploy.finished', env: 'prod', service: 'api' };
  const rows: Row[] = [
    // Published behaviour
    ['no filter matches everything', null, deploy, true],
    ['empty filter matches everything', {}, deploy, true],
    ['bare list = in (hit)', { event: ['deploy.finished'] }, deploy, true],
    ['bare list = in (miss)', { event: ['deploy.started'] }, deploy, false, 'event'],
    ['in operator', { env: { in: ['prod', 'eu'] } }, deploy, true],
    ['not_in operator (listed)', { env: { not_in: ['dev', 'prod'] } }, deploy, false, 'env'],
    ['not_in operator (not listed)', { env: { not_in: ['dev', 'staging'] } }, deploy, true],
    ['exists true on present key', { service: { exists: true } }, deploy, true],
    ['exists false on present key', { service: { exists: false } }, deploy, false, 'service'],
    [
      'the documented example',
      {
        event: ['deploy.finished'],
        env: { not_in: ['dev', 'staging'] },
        service: { exists: true },
      },
      deploy,
      true,
    ],
    ['every key must match', { event: ['deploy.finished'], env: ['dev'] }, deploy, false, 'env'],
    ['nested objects reach nested fields', { a: { b: { c: [1] } } }, { a: { b: { c: 1 } } }, true],
    ['nested miss names the full path', { a: { b: ['x'] } }, { a: { b: 'y' } }, false, 'a.b'],
    // Missing keys (recommended rules)
    ['missing key fails a bare list', { env: ['prod'] }, {}, false, 'env'],
    ['missing key fails in', { env: { in: ['prod'] } }, {}, false, 'env'],
    ['missing key passes not_in', { env: { not_in: ['dev'] } }, {}, true],
    ['missing key passes exists: false', { env: { exists: false } }, {}, true],
    ['missing key fails exists: true', { env: { exists: true } }, {}, false, 'env'],
    ['missing parent fails a nested in', { a: { b: ['x'] } }, {}, false, 'a.b'],
    ['missing parent passes a nested not_in', { a: { b: { not_in: ['x'] } } }, {}, true],
    ['null counts as present for exists', { a: { exists: true } }, { a: null }, true],
    ['null is a value for in', { a: [null] }, { a: null }, true],
    // Array-valued fields (recommended rules)
    [
      'array field matches in when any element is listed',
      { labels: ['bug'] },
      { labels: ['ui', 'bug'] },
      true,
    ],
    [
      'array field fails in when no element is listed',
      { labels: ['bug'] },
      { labels: ['ui'] },
      false,
      'labels',
    ],
    [
      'array field passes not_in when no element is listed',
      { labels: { not_in: ['wip'] } },
      { labels: ['ui'] },
      true,
    ],
    [
      'array field fails not_in when any element is listed',
      { labels: { not_in: ['wip'] } },
      { labels: ['ui', 'wip'] },
      false,
      'labels',
    ],
    ['empty array field fails in', { labels: ['bug'] }, { labels: [] }, false, 'labels'],
    [
      'nested filter over an array of objects: any element',
      { commits: { author: ['bob'] } },
      { commits: [{ author: 'al' }, { author: 'bob' }] },
      true,
    ],
    [
      'nested filter over an array of objects: none',
      { commits: { author: ['bob'] } },
      { commits: [{ author: 'al' }] },
      false,
      'commits.author',
    ],
    ['array body: any element matches', { kind: ['a'] }, [{ kind: 'b' }, { kind: 'a' }], true],
    ['scalar body has no fields', { kind: ['a'] }, 'a', false, 'kind'],
    // Type comparison (no coercion)
    ['string "1" is not number 1', { n: ['1'] }, { n: 1 }, false, 'n'],
    ['number 1 is not string "1"', { n: [1] }, { n: '1' }, false, 'n'],
    ['true is not "true"', { b: ['true'] }, { b: true }, false, 'b'],
    ['1 equals 1.0', { n: [1.0] }, { n: 1 }, true],
    ['objects never equal a listed scalar', { o: ['x'] }, { o: { x: 1 } }, false, 'o'],
    ['a scalar condition is a one-value list', { event: 'deploy.finished' }, deploy, true],
    [
      'combined operators all hold',
      { env: { exists: true, not_in: ['dev'], in: ['prod'] } },
      deploy,
      true,
    ],
  ];

  // A rest parameter keeps jest from reading the optional 5th column as a `done` callback.
  it.each(rows)('%s', (...row) => {
    const [, filter, body, matched, failedKey] = row as Row;
    const outcome = matchPayload(filter, body);
    expect(outcome.matched).toBe(matched);
    if (!matched) {
      expect(outcome.failedKey).toBe(failedKey);
      expect(outcome.reason).toEqual(expect.any(String));
    }
  });

  it('says why a key failed', () => {
    expect(matchPayload({ env: { not_in: ['prod'] } }, { env: 'prod' })).toEqual({
      matched: false,
      failedKey: 'env',
      reason: 'value "prod" is listed in not_in',
    });
    expect(matchPayload({ env: ['prod'] }, {}).reason).toBe('the field is missing');
  });
});

describe('validatePayloadFilter', () => {
  it.each([
    ['a list', { a: ['x'] }],
    ['operators', { a: { in: [1], not_in: [2], exists: true } }],
    ['nesting', { a: { b: { c: { exists: false } } } }],
    ['scalar values', { a: 'x', b: 1, c: null, d: true }],
  ])('accepts %s', (_name, filter) => {
    expect(validatePayloadFilter(filter)).toEqual([]);
  });

  it.each([
    ['a non-object', ['x'], [], /must be an object/],
    ['an empty list', { a: [] }, ['a'], /at least one value/],
    ['objects in a list', { a: [{ b: 1 }] }, ['a', 0], /strings, numbers, booleans or null/],
    ['in that is not a list', { a: { in: 'x' } }, ['a', 'in'], /in must be a list/],
    ['exists that is not a boolean', { a: { exists: 'yes' } }, ['a', 'exists'], /true or false/],
    ['operators mixed with fields', { a: { in: ['x'], b: ['y'] } }, ['a'], /mixes operators/],
    ['an empty object', { a: {} }, ['a'], /empty object/],
  ])('refuses %s, naming where', (_name, filter, path, message) => {
    const problems = validatePayloadFilter(filter);
    expect(problems[0].path).toEqual(path);
    expect(problems[0].message).toMatch(message);
  });

  it('bounds depth and size', () => {
    let deep: Record<string, unknown> = { leaf: ['x'] };
    for (let i = 0; i < 9; i++) deep = { [`k${i}`]: deep };
    expect(validatePayloadFilter(deep)[0].message).toMatch(/deeper than 8/);
    const wide = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, [i]]));
    expect(
      validatePayloadFilter(wide)
        .map((p) => p.message)
        .join(),
    ).toMatch(/201 keys; at most 200/);
    const long = { a: Array.from({ length: 101 }, (_, i) => i) };
    expect(validatePayloadFilter(long)[0].message).toMatch(/101 values; at most 100/);
  });
});
