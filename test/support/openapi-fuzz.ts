import fc from 'fast-check';

/** The parts of an OpenAPI 3 schema the generator reads. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  example?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  nullable?: boolean;
}

export interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}

export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** The largest string the fuzzer sends (the JSON limit is far above it). */
export const HUGE = 200 * 1024;

/** Strings that have broken servers before: invalid Unicode, NUL, SQL-ish, path-ish, huge. */
export const NASTY_STRINGS: readonly string[] = [
  '',
  ' ',
  'bad\ud800x',
  '\udc00',
  'nul\u0000byte',
  '\u0000',
  "' OR '1'='1' --",
  'x"; DROP TABLE runs; --',
  '%',
  '%ED%A0%80',
  '%00',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '/dev/zero',
  '\u202Ertl\uFEFF',
  '🚀👩‍💻 部署 e\u0301',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  'a'.repeat(HUGE),
  '\ud83d'.repeat(100),
  'é'.repeat(70_000),
  '0000-00-00T00:00:00Z',
  '9999-99-99',
  'AAAAAAAAAAAAAAAAAAAAAA',
  '00000000-0000-0000-0000-000000000000',
];

const NASTY_NUMBERS: readonly number[] = [
  -1,
  0,
  -0,
  1.5,
  2 ** 31,
  2 ** 32 + 1,
  2 ** 53 + 2,
  -(2 ** 63),
  1e308,
  -1e308,
  5e-324,
];

/** A value nested `depth` deep, alternating arrays and objects. */
export function deep(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { d: value };
  return value;
}

export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_NUMBERS) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': '' }, ['a', 1]),
  },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 3000 }).map(deep) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
);

function resolve(schema: Schema, doc: OpenApiDocument): Schema {
  let current = schema;
  for (let i = 0; i < 20 && current.$ref; i++) {
    const name = current.$ref.replace('#/components/schemas/', '');
    current = doc.components?.schemas?.[name] ?? {};
  }
  return current;
}

/** Values that follow the schema (types, enums, required fields), small. */
export function fromSchema(schema: Schema, doc: OpenApiDocument, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  if (depth > 6) return fc.constant(null);
  if (s.allOf?.length) {
    const merged: Schema = { type: 'object', properties: {}, required: [] };
    for (const part of s.allOf.map((p) => resolve(p, doc))) {
      Object.assign(merged.properties!, part.properties ?? {});
      merged.required!.push(...(part.required ?? []));
    }
    return fromSchema(merged, doc, depth + 1);
  }
  const variants = s.oneOf ?? s.anyOf;
  if (variants?.length) return fc.oneof(...variants.map((v) => fromSchema(v, doc, depth + 1)));
  if (s.enum?.length) return fc.constantFrom(...s.enum);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  const examples = s.example !== undefined ? [fc.constant(s.example)] : [];
  switch (type) {
    case 'string': {
      const text =
        s.format === 'date-time'
          ? fc
              .date({
                min: new Date('2000-01-01'),
                max: new Date('2100-01-01'),
                noInvalidDate: true,
              })
              .map((d) => d.toISOString())
          : fc.string({ minLength: Math.min(s.minLength ?? 1, 5), maxLength: 24 });
      return examples.length ? fc.oneof(examples[0], text) : text;
    }
    case 'integer':
      return fc.integer({ min: s.minimum ?? -5, max: Math.min(s.maximum ?? 1000, 1_000_000) });
    case 'number':
      return fc.double({ min: s.minimum ?? -5, max: s.maximum ?? 1000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(s.items ? fromSchema(s.items, doc, depth + 1) : fc.string(), {
        maxLength: 3,
      });
    case 'object':
    case undefined: {
      if (!s.properties) {
        // A map (`mcp_servers`, MCP `env`/`headers`…): values follow `additionalProperties`.
        const values =
          typeof s.additionalProperties === 'object'
            ? fromSchema(s.additionalProperties, doc, depth + 1)
            : fc.string();
        return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), values, { maxKeys: 3 });
      }
      const shape: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, property] of Object.entries(s.properties)) {
        shape[name] = fromSchema(property, doc, depth + 1);
      }
      return fc.record(shape, { requiredKeys: (s.required ?? []).filter((k) => k in shape) });
    }
    default:
      return fc.anything({ maxDepth: 2 });
  }
}

type Mutation =
  | { kind: 'replace'; at: number; value: unknown }
  | { kind: 'remove'; at: number }
  | { kind: 'extra'; at: number; key: string; value: unknown }
  | { kind: 'whole'; value: unknown };

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('replace' as const),
      at: fc.nat(),
      value: nastyValue,
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('extra' as const),
      at: fc.nat(),
      key: fc.oneof(
        fc.string({ maxLength: 10 }),
        fc.constantFrom('__proto__', 'constructor', 'bad\ud800'),
      ),
      value: nastyValue,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('whole' as const), value: nastyValue }) },
);

/** Every object and array in `value` with the key or index of each child: where mutations apply. */
function containers(
  value: unknown,
  out: { holder: Record<string, unknown> | unknown[]; key: string | number }[] = [],
  depth = 0,
): typeof out {
  if (value === null || typeof value !== 'object' || depth > 8) return out;
  if (Array.isArray(value)) {
    value.forEach((child, i) => {
      out.push({ holder: value, key: i });
      containers(child, out, depth + 1);
    });
  } else {
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      out.push({ holder: value as Record<string, unknown>, key });
      containers(child, out, depth + 1);
    }
  }
  return out;
}

/** Applies a mutation to a copy of a generated body. */
export function mutate(body: unknown, change: Mutation): unknown {
  if (change.kind === 'whole') return change.value;
  const copy = structuredClone(body);
  const slots = containers(copy);
  if (!slots.length) return change.kind === 'replace' ? change.value : copy;
  const slot = slots[change.at % slots.length];
  if (change.kind === 'replace') {
    (slot.holder as Record<string | number, unknown>)[slot.key] = change.value;
  } else if (change.kind === 'remove') {
    if (Array.isArray(slot.holder)) slot.holder.splice(Number(slot.key), 1);
    else delete slot.holder[slot.key];
  } else {
    const target = (slot.holder as Record<string | number, unknown>)[slot.key];
    const holder =
      target !== null && typeof target === 'object' && !Array.isArray(target)
        ? (target as Record<string, unknown>)
        : copy !== null && typeof copy === 'object' && !Array.isArray(copy)
          ? (copy as Record<string, unknown>)
          : null;
    if (holder)
      Object.defineProperty(holder, change.key, {
        value: change.value,
        enumerable: true,
        configurable: true,
        writable: true,
      });
  }
  return copy;
}
