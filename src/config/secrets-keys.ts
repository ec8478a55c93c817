import type { AppConfig } from './app-config.types';
import { ConfigError } from './config-error';

/** AMBIENT_SECRETS_PREVIOUS_KEYS: only beside the current key, and never it. */
export function previousSecretsKeys(text: string | undefined, config: AppConfig): Buffer[] {
  const name = 'AMBIENT_SECRETS_PREVIOUS_KEYS';
  const parts = (text ?? '').split(',').filter((part) => part.trim() !== '');
  if (parts.length && !config.secretsKey) {
    throw new ConfigError(`${name}: set only beside AMBIENT_SECRETS_KEY (the current key)`);
  }
  const keys = parts.map((part) => parseSecretsKey(part, name));
  if (keys.some((key) => key.equals(config.secretsKey!))) {
    throw new ConfigError(`${name}: must not contain the current AMBIENT_SECRETS_KEY`);
  }
  return keys;
}

/** 32 bytes as 64 hex digits or base64 (either alphabet, padding optional). */
export function parseSecretsKey(text: string, name: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : null;
  if (!key || key.length !== 32) {
    throw new ConfigError(
      `${name}: must be 32 bytes, as 64 hex digits or base64 (e.g. \`openssl rand -base64 32\`)`,
    );
  }
  return key;
}
