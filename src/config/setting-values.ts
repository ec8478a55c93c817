import { ConfigError } from './config-error';

export const ROLES = ['api', 'ingress', 'worker', 'scheduler'] as const;
export type Role = (typeof ROLES)[number];

type Kind = 'string' | 'int' | 'number' | 'bool' | 'url' | 'roles';
/** One overridable setting: its place in the YAML tree, its environment variable and its type. */
export interface Setting {
  path: string;
  env: string;
  kind: Kind;
  min?: number;
  max?: number;
  /** The only values a string setting may take. */
  oneOf?: readonly string[];
  /** May be left unset (absent from the file and the environment, or empty). */
  optional?: boolean;
  /** Also takes `off` (read as null): a port setting whose listener can be turned off. */
  allowOff?: boolean;
}

export function getPath(tree: Record<string, unknown>, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], tree);
}

export function setPath(tree: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = tree;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

export function coerce(setting: Setting, raw: unknown, source: string): unknown {
  const fail = (why: string): never => {
    throw new ConfigError(`${source}: ${why} (got ${JSON.stringify(raw)})`);
  };
  if (setting.allowOff && raw === 'off') return null;
  switch (setting.kind) {
    case 'string':
      if (typeof raw !== 'string' || raw.trim() === '') fail('must be a non-empty string');
      if (setting.oneOf && !setting.oneOf.includes(raw as string)) {
        fail(`must be one of ${setting.oneOf.join(', ')}`);
      }
      return raw;
    case 'url': {
      if (typeof raw !== 'string') return fail('must be a URL');
      try {
        new URL(raw);
      } catch {
        fail('must be a valid URL');
      }
      return raw;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1' || raw === 'on') return true;
      if (raw === 'false' || raw === '0' || raw === 'off') return false;
      return fail('must be true or false (or on / off)');
    }
    case 'int':
    case 'number': {
      const n = typeof raw === 'number' ? raw : Number(String(raw).trim());
      if (!Number.isFinite(n) || String(raw).trim() === '') {
        fail(setting.allowOff ? 'must be a number or off' : 'must be a number');
      }
      if (setting.kind === 'int' && !Number.isInteger(n)) fail('must be an integer');
      if (setting.min !== undefined && n < setting.min) fail(`must be at least ${setting.min}`);
      if (setting.max !== undefined && n > setting.max) fail(`must be at most ${setting.max}`);
      return n;
    }
    case 'roles': {
      const list = Array.isArray(raw) ? raw : String(raw).split(',');
      const roles = list.map((r) => String(r).trim()).filter(Boolean);
      if (roles.length === 0) fail(`must name at least one of ${ROLES.join(', ')}`);
      for (const role of roles) {
        if (!(ROLES as readonly string[]).includes(role)) {
          fail(`unknown role "${role}"; expected any of ${ROLES.join(', ')}`);
        }
      }
      return [...new Set(roles)];
    }
  }
}
