import type {
  AmbientExtension,
  SettingDeclaration,
  SettingValue,
  SettingValues,
} from './extension.types';

const TYPES = ['string', 'number', 'boolean'];
const VARIABLE = /^[A-Z][A-Z0-9_]*$/;

/** Throws why an extension's `settings` cannot be read (checked when the extension loads). */
export function checkSettingDeclarations(settings: unknown): void {
  if (!Array.isArray(settings)) throw new Error('"settings" must be a list');
  const seen = new Set<string>();
  for (const setting of settings as Partial<SettingDeclaration>[]) {
    const name = setting?.name;
    if (typeof name !== 'string' || !VARIABLE.test(name)) {
      throw new Error(
        'a setting needs a name of upper-case letters, digits and "_" (its environment variable)',
      );
    }
    if (name.startsWith('AMBIENT_'))
      throw new Error(`setting ${name}: AMBIENT_* variables are Ambient's own`);
    if (seen.has(name)) throw new Error(`setting ${name} is declared twice`);
    seen.add(name);
    if (!TYPES.includes(setting.type as string)) {
      throw new Error(`setting ${name}: type must be one of ${TYPES.join(', ')}`);
    }
    if (setting.default !== undefined && typeof setting.default !== setting.type) {
      throw new Error(`setting ${name}: its default must be a ${setting.type}`);
    }
    if (typeof setting.description !== 'string' || setting.description.trim() === '') {
      throw new Error(`setting ${name} has no description`);
    }
  }
}

/**
 * An extension's settings read from `env`, of their declared types (defaults for the unset).
 * Throws one line naming the variable and the extension for a value that is not of its type or a
 * required one that is missing.
 */
export function readSettings(extension: AmbientExtension, env: NodeJS.ProcessEnv): SettingValues {
  const values: Record<string, SettingValue | undefined> = {};
  for (const setting of extension.settings ?? []) {
    const raw = env[setting.name];
    const whose = `a setting of extension ${extension.name}`;
    if (raw === undefined || raw === '') {
      if (setting.default === undefined && setting.required) {
        throw new Error(`${setting.name}: missing (${whose}: ${setting.description})`);
      }
      values[setting.name] = setting.default;
      continue;
    }
    const value = parse(setting.type, raw);
    if (value === undefined) {
      throw new Error(
        `${setting.name}: must be ${EXPECTED[setting.type]} (got ${JSON.stringify(raw)}; ${whose})`,
      );
    }
    values[setting.name] = value;
  }
  return Object.freeze(values);
}

const EXPECTED: Record<SettingDeclaration['type'], string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'true or false (or 1 / 0, on / off)',
};

function parse(type: SettingDeclaration['type'], raw: string): SettingValue | undefined {
  switch (type) {
    case 'string':
      return raw;
    case 'number': {
      const n = Number(raw.trim());
      return raw.trim() !== '' && Number.isFinite(n) ? n : undefined;
    }
    case 'boolean': {
      const text = raw.trim().toLowerCase();
      if (['true', '1', 'on'].includes(text)) return true;
      if (['false', '0', 'off'].includes(text)) return false;
      return undefined;
    }
  }
}
