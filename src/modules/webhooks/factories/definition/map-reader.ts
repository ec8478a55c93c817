import { FileDiagnostics, SourcePosition } from './diagnostics';
import { KeyPath, YamlSource } from './yaml-source';

/**
 * Reads a YAML mapping key by key, reporting wrong types, missing and unknown keys at the line
 * they sit on. Every getter returns undefined after reporting a problem.
 */
export class MapReader {
  constructor(
    readonly source: YamlSource,
    readonly diagnostics: FileDiagnostics,
    readonly path: KeyPath,
    readonly value: Record<string, unknown>,
  ) {}

  /** A reader for the mapping at `path`, or undefined (reported) when it is not a mapping. */
  static of(
    source: YamlSource,
    diagnostics: FileDiagnostics,
    path: KeyPath,
    value: unknown,
    what: string,
  ): MapReader | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      diagnostics.add(
        'invalid_type',
        source.at(path),
        `${what} must be a mapping of keys to values`,
      );
      return undefined;
    }
    return new MapReader(source, diagnostics, path, value as Record<string, unknown>);
  }

  at(key: string | number): SourcePosition {
    return this.source.at([...this.path, key]);
  }

  has(key: string): boolean {
    return this.value[key] !== undefined && this.value[key] !== null;
  }

  error(key: string, code: string, message: string): void {
    this.diagnostics.add(code, this.at(key), message);
  }

  allowOnly(keys: readonly string[], where: string): void {
    for (const key of Object.keys(this.value)) {
      if (!keys.includes(key)) {
        this.diagnostics.add(
          'unknown_key',
          this.source.keyAt([...this.path, key]),
          `unknown key "${key}" in ${where} (allowed: ${keys.join(', ')})`,
        );
      }
    }
  }

  string(
    key: string,
    options: { required?: boolean; pattern?: RegExp; rule?: string; max?: number } = {},
  ): string | undefined {
    const value = this.value[key];
    if (value === undefined || value === null) {
      if (options.required) this.error(key, 'required', `"${key}" is required`);
      return undefined;
    }
    if (typeof value !== 'string') {
      this.error(key, 'invalid_type', `"${key}" must be a string`);
      return undefined;
    }
    if (options.max !== undefined && value.length > options.max) {
      this.error(key, 'invalid_value', `"${key}" must be at most ${options.max} characters`);
      return undefined;
    }
    if (options.pattern && !options.pattern.test(value)) {
      this.error(
        key,
        'invalid_value',
        `"${key}" ${options.rule ?? `must match ${options.pattern}`}`,
      );
      return undefined;
    }
    return value;
  }

  bool(key: string, fallback: boolean): boolean {
    const value = this.value[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'boolean') {
      this.error(key, 'invalid_type', `"${key}" must be true or false`);
      return fallback;
    }
    return value;
  }

  oneOf<T extends string>(key: string, values: readonly T[], fallback?: T): T | undefined {
    const value = this.value[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
      this.error(
        key,
        'invalid_value',
        `"${key}" must be one of ${values.join(', ')} (got ${JSON.stringify(value)})`,
      );
      return undefined;
    }
    return value as T;
  }

  map(key: string, what = `"${key}"`): MapReader | undefined {
    if (!this.has(key)) return undefined;
    return MapReader.of(this.source, this.diagnostics, [...this.path, key], this.value[key], what);
  }

  list(key: string): unknown[] | undefined {
    if (!this.has(key)) return undefined;
    const value = this.value[key];
    if (!Array.isArray(value)) {
      this.error(key, 'invalid_type', `"${key}" must be a list`);
      return undefined;
    }
    return value;
  }

  stringList(key: string): string[] | undefined {
    const list = this.list(key);
    if (!list) return undefined;
    const bad = list.findIndex((item) => typeof item !== 'string');
    if (bad !== -1) {
      this.diagnostics.add(
        'invalid_type',
        this.source.at([...this.path, key, bad]),
        `"${key}" must list strings`,
      );
      return undefined;
    }
    return list as string[];
  }
}
