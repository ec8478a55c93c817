import fc from 'fast-check';
import type { BoundSecret } from './egress-policy';
import {
  EgressRuleError,
  matchEgressRule,
  needsInterception,
  parseEgressRules,
  parseHostPatterns,
  secretsFor,
} from './egress-rules';

function errorOf(run: () => unknown): EgressRuleError {
  try {
    run();
  } catch (err) {
    if (err instanceof EgressRuleError) return err;
    throw err;
  }
  throw new Error('expected an EgressRuleError');
}

describe('parseEgressRules', () => {
  it('parses hosts, ports, wildcards, addresses and method rules', () => {
    expect(
      parseEgressRules([
        'API.Example.com.',
        'example.com:8443',
        '*.githubusercontent.com',
        '*.corp.example:22',
        '10.1.2.3:5432',
        '[::1]:8080',
        { host: 'api.github.com', methods: ['get', 'HEAD', 'GET'] },
      ]),
    ).toEqual([
      {
        host: 'api.example.com',
        wildcard: false,
        port: null,
        methods: null,
        source: 'API.Example.com.',
      },
      {
        host: 'example.com',
        wildcard: false,
        port: 8443,
        methods: null,
        source: 'example.com:8443',
      },
      {
        host: 'githubusercontent.com',
        wildcard: true,
        port: null,
        methods: null,
        source: '*.githubusercontent.com',
      },
      {
        host: 'corp.example',
        wildcard: true,
        port: 22,
        methods: null,
        source: '*.corp.example:22',
      },
      { host: '10.1.2.3', wildcard: false, port: 5432, methods: null, source: '10.1.2.3:5432' },
      { host: '::1', wildcard: false, port: 8080, methods: null, source: '[::1]:8080' },
      {
        host: 'api.github.com',
        wildcard: false,
        port: null,
        methods: ['GET', 'HEAD'],
        source: 'api.github.com (GET, HEAD)',
      },
    ]);
  });

  it.each(
    (
      [
        [{ egress: [] }, 'egress_allow: must be a list'],
        [['ok.example', 42], 'egress_allow.1: must be a host string or an object with "host"'],
        [
          ['a.example', 'b.example', { host: 'exa mple.com' }],
          'egress_allow.2.host: "exa mple.com" is not a host name',
        ],
        [['-bad.example'], 'egress_allow.0: "-bad.example" is not a host name'],
        [['bad-.example'], 'egress_allow.0: "bad-.example" is not a host name'],
        [['under_score.example'], 'egress_allow.0: "under_score.example" is not a host name'],
        [
          [`${'a'.repeat(64)}.example`],
          `egress_allow.0: "${'a'.repeat(64)}.example" is not a host name`,
        ],
        [[`${'a.'.repeat(127)}ab`], `egress_allow.0: "${'a.'.repeat(127)}ab" is not a host name`],
        [['999.1.1.1'], 'egress_allow.0: "999.1.1.1" is not a host name'],
        [[''], 'egress_allow.0: "" is not a host name'],
        [
          ['*.com'],
          'egress_allow.0: "*.com" is too broad: a wildcard needs at least two labels after "*."',
        ],
        [['*'], 'egress_allow.0: "*" is not a host name'],
        [['a.*.example.com'], 'egress_allow.0: "a.*.example.com" is not a host name'],
        [['example.com:0'], 'egress_allow.0: port "0" is not a number 1–65535'],
        [['example.com:65536'], 'egress_allow.0: port "65536" is not a number 1–65535'],
        [['example.com:'], 'egress_allow.0: port "" is not a number 1–65535'],
        [['::1'], 'egress_allow.0: "::1": write an IPv6 address in brackets'],
        [['[example.com]'], 'egress_allow.0: "[example.com]" is not an IPv6 address'],
        [
          [{ host: 'a.example', method: ['GET'] }],
          'egress_allow.0: "method" is not a rule field (host, methods)',
        ],
        [[{ methods: ['GET'] }], 'egress_allow.0.host: is required'],
        [
          [{ host: 'a.example', methods: [] }],
          'egress_allow.0.methods: must list at least one method',
        ],
        [
          [{ host: 'a.example', methods: 'GET' }],
          'egress_allow.0.methods: must be a list of HTTP methods',
        ],
        [
          ['x.example', { host: 'a.example', methods: ['GET', 'FETCH'] }],
          'egress_allow.1.methods.1: "FETCH" is not an HTTP method (GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS, TRACE)',
        ],
        [Array(201).fill('a.example'), 'egress_allow: lists 201 rules; at most 200'],
      ] as [unknown, string][]
    ).map(([input, message]) => ({ input, message })),
  )('refuses with "$message"', ({ input, message }) => {
    const error = errorOf(() => parseEgressRules(input));
    expect(error.message).toBe(message);
    expect(message.startsWith(`${error.field}: `)).toBe(true);
  });

  it('names the field it was given', () => {
    expect(
      errorOf(() => parseHostPatterns(['ok.example', 'no way'], 'secrets.0.inject_hosts')).message,
    ).toBe('secrets.0.inject_hosts.1: "no way" is not a host name');
    expect(errorOf(() => parseHostPatterns([{ host: 'a.example' }], 'inject_hosts')).message).toBe(
      'inject_hosts.0: must be a string',
    );
  });
});

describe('matchEgressRule', () => {
  const rules = parseEgressRules([
    'plain.example',
    'alt.example:8443',
    '*.wild.example',
    { host: 'api.example', methods: ['GET', 'HEAD'] },
    '[2001:db8::1]',
  ]);
  const matched = (host: string, port: number, method: string | null = null) =>
    matchEgressRule(rules, host, port, method)?.rule.source ?? null;

  it('matches a host on 443 and 80 when the rule names no port', () => {
    expect(matched('plain.example', 443)).toBe('plain.example');
    expect(matched('PLAIN.example.', 80)).toBe('plain.example');
    expect(matched('plain.example', 8080)).toBeNull();
    expect(matched('other.example', 443)).toBeNull();
  });

  it('matches only the port a rule names', () => {
    expect(matched('alt.example', 8443)).toBe('alt.example:8443');
    expect(matched('alt.example', 443)).toBeNull();
  });

  it('matches names strictly below a wildcard suffix', () => {
    expect(matched('a.wild.example', 443)).toBe('*.wild.example');
    expect(matched('a.b.wild.example', 443)).toBe('*.wild.example');
    expect(matched('wild.example', 443)).toBeNull();
    expect(matched('notwild.example', 443)).toBeNull();
  });

  it('limits methods when the request method is known', () => {
    expect(matched('api.example', 443, 'get')).toBe('api.example (GET, HEAD)');
    expect(matched('api.example', 443, 'POST')).toBeNull();
    expect(matched('api.example', 443)).toBe('api.example (GET, HEAD)');
  });

  it('matches IPv6 addresses in any spelling', () => {
    expect(matched('[2001:DB8:0::1]', 443)).toBe('[2001:db8::1]');
  });
});

describe('needsInterception', () => {
  const rules = parseEgressRules([
    'plain.example',
    { host: 'api.example', methods: ['GET'] },
    { host: 'both.example', methods: ['GET'] },
    'both.example',
  ]);
  const secret: BoundSecret = {
    name: 'TOKEN',
    placeholder: 'ambient-secret-TOKEN',
    value: 'v',
    hosts: ['plain.example', '*.git.example:8443'],
  };

  it('intercepts a bound secret host, and hosts whose every rule limits methods', () => {
    expect(needsInterception(rules, [], 'plain.example', 443)).toBe(false);
    expect(needsInterception(rules, [secret], 'plain.example', 443)).toBe(true);
    expect(needsInterception(rules, [secret], 'x.git.example', 8443)).toBe(true);
    expect(needsInterception(rules, [secret], 'x.git.example', 443)).toBe(false);
    expect(needsInterception(rules, [], 'api.example', 443)).toBe(true);
    expect(needsInterception(rules, [], 'both.example', 443)).toBe(false);
    expect(needsInterception([], [], 'api.example', 443)).toBe(false);
  });

  it('lists the secrets bound to a host', () => {
    expect(secretsFor([secret], 'PLAIN.example', 80)).toEqual([secret]);
    expect(secretsFor([secret], 'other.example', 443)).toEqual([]);
  });
});

describe('parseEgressRules properties', () => {
  const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/);
  const topLabel = fc.stringMatching(/^[a-z]([a-z0-9-]{0,8}[a-z0-9])?$/);
  const hostName = fc
    .tuple(fc.array(label, { minLength: 0, maxLength: 4 }), topLabel)
    .map(([labels, top]) => [...labels, top].join('.'));
  const port = fc.option(fc.integer({ min: 1, max: 65535 }), { nil: null });
  const validRule = fc.record({
    host: hostName,
    wildcard: fc.boolean(),
    extra: label,
    port,
    upper: fc.boolean(),
  });

  it('throws nothing but EgressRuleError on arbitrary JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        try {
          parseEgressRules(value);
        } catch (err) {
          expect(err).toBeInstanceOf(EgressRuleError);
          expect((err as EgressRuleError).message).toMatch(
            /^egress_allow(\.(\d+|host|methods))*: /,
          );
        }
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the source of every valid rule, and matches the host it names', () => {
    fc.assert(
      fc.property(validRule, ({ host, wildcard, extra, port: rulePort, upper }) => {
        const base = wildcard && !host.includes('.') ? `${extra}.${host}` : host;
        const written = `${wildcard ? '*.' : ''}${upper ? base.toUpperCase() : base}${rulePort === null ? '' : `:${rulePort}`}`;
        const [rule] = parseEgressRules([written]);
        expect(rule.source).toBe(written);
        expect(rule.host).toBe(base);
        const target = wildcard ? `${extra}.${base}` : base;
        for (const p of rulePort === null ? [443, 80] : [rulePort]) {
          expect(matchEgressRule([rule], target.toUpperCase(), p, null)).toEqual({ rule });
        }
        if (wildcard) expect(matchEgressRule([rule], base, rulePort ?? 443, null)).toBeNull();
      }),
    );
  });

  it('names the field of an invalid host', () => {
    const badChar = fc.constantFrom(' ', '_', '/', '@', '!', '*', '%', 'é', '..');
    fc.assert(
      fc.property(
        hostName,
        badChar,
        fc.nat(),
        fc.nat({ max: 5 }),
        fc.boolean(),
        (host, bad, at, index, asObject) => {
          const position = at % (host.length + 1);
          const broken = `${host.slice(0, position)}${bad}${host.slice(position)}`;
          const list: unknown[] = Array<string>(index).fill('ok.example');
          list.push(asObject ? { host: broken } : broken);
          const field = asObject ? `egress_allow.${index}.host` : `egress_allow.${index}`;
          const error = errorOf(() => parseEgressRules(list));
          expect(error.field).toBe(field);
          expect(error.message.startsWith(`${field}: `)).toBe(true);
        },
      ),
    );
  });
});
