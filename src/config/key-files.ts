import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import type { AppConfig } from './app-config';
import { checkUrlSigningKey } from './blob-settings';
import { ConfigError } from './config-error';
import { parseSecretsKey } from './secrets-keys';

/** The two keys a server needs, and the file each is kept in when the environment has none. */
export const KEY_FILES = [
  { env: 'AMBIENT_SECRETS_KEY', file: 'secrets.key' },
  { env: 'AMBIENT_URL_SIGNING_KEY', file: 'url-signing.key' },
] as const;

type KeyName = (typeof KEY_FILES)[number]['env'];

export interface KeyOrigin {
  env: KeyName;
  /** env: the variable (or config file); file: read from `path`; created: written to `path` now. */
  source: 'env' | 'file' | 'created' | 'none';
  path?: string;
}

/**
 * Completes `config` with the keys the environment left unset, from key files under `keys.dir`.
 * - `create` (the server): reads each file, or creates it with a random key (mode 0600). Two
 *   processes starting together on one machine end up with the same key: the file appears
 *   complete in one step (a hard link of a finished temporary file), and the loser reads it.
 *   With NODE_ENV=production nothing is read or created: missing keys stop start-up.
 * - `read` (the CLI): reads existing files only, so `migrate` never creates keys.
 */
export function provideKeys(
  config: AppConfig,
  env: NodeJS.ProcessEnv,
  mode: 'create' | 'read',
): KeyOrigin[] {
  const missing = KEY_FILES.filter(({ env: name }) => current(config, name) === undefined);
  if (mode === 'create' && env.NODE_ENV === 'production' && missing.length > 0) {
    const names = missing.map((key) => key.env).join(', ');
    throw new ConfigError(
      `${names}: required when NODE_ENV=production (key files are generated only outside production); set ${missing.length > 1 ? 'them' : 'it'} to a random value, e.g. \`openssl rand -base64 32\`, the same on every replica`,
    );
  }
  const dir = resolve(config.keys.dir);
  return KEY_FILES.map(({ env: name, file }): KeyOrigin => {
    if (current(config, name) !== undefined) return { env: name, source: 'env' };
    const path = join(dir, file);
    let text = readKeyFile(path, name);
    let source: KeyOrigin['source'] = 'file';
    if (text === null) {
      if (mode === 'read') return { env: name, source: 'none' };
      const generated = `${randomBytes(32).toString('base64')}\n`;
      if (createKeyFile(dir, path, generated, name)) {
        text = generated;
        source = 'created';
      } else {
        text = readKeyFile(path, name)!;
      }
    }
    apply(config, name, text.trim(), path);
    return { env: name, source, path };
  });
}

function createKeyFile(dir: string, path: string, text: string, name: KeyName): boolean {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return writeOnce(path, text);
  } catch (err) {
    throw new ConfigError(
      `${name}: cannot create key file ${path} (${(err as Error).message}); set ${name}, or AMBIENT_KEY_DIR to a writable directory`,
    );
  }
}

/** One line for the log when keys were created: where they are and what replicas need. */
export function describeCreatedKeys(origins: KeyOrigin[]): string | null {
  const created = origins.filter((origin) => origin.source === 'created');
  if (created.length === 0) return null;
  const where = created.map((origin) => `${origin.env} → ${origin.path}`).join(', ');
  return `generated ${where} (mode 0600; reused on later starts). Replicas on other machines need the same values: set ${created.map((origin) => origin.env).join(' and ')} to the file contents there`;
}

function current(config: AppConfig, name: KeyName): unknown {
  return name === 'AMBIENT_SECRETS_KEY' ? config.secretsKey : config.blobs.signingKey;
}

function apply(config: AppConfig, name: KeyName, text: string, path: string): void {
  const source = `${name}: key file ${path}`;
  if (name === 'AMBIENT_SECRETS_KEY') {
    config.secretsKey = parseSecretsKey(text, source);
  } else {
    checkUrlSigningKey(text, source);
    config.blobs.signingKey = text;
  }
}

/** The file's text, or null when it does not exist; refuses a file others may read. */
function readKeyFile(path: string, name: KeyName): string | null {
  let mode: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) throw new ConfigError(`${name}: key file ${path} is not a regular file`);
    mode = stats.mode & 0o777;
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(`${name}: cannot read key file ${path} (${(err as Error).message})`);
  }
  if (mode & 0o077) {
    throw new ConfigError(
      `${name}: key file ${path} has mode 0${mode.toString(8)}, others may read it; run chmod 600 ${path} (or set ${name})`,
    );
  }
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name}: cannot read key file ${path}: ${(err as Error).message}`);
  }
}

/**
 * Writes `text` to `path` unless it exists, never leaving a partial file at `path`: the text goes
 * to a private temporary file first, which is then hard-linked into place (fails if `path`
 * exists). True when this call created `path`.
 */
export function writeOnce(path: string, text: string): boolean {
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(temporary, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(temporary);
  }
}
