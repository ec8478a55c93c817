import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { APP_CONFIG, AppConfig } from '../../config/app-config';

const VERSION = 1;
const KEY_ID_BYTES = 4;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES + IV_BYTES + TAG_BYTES;

/** Raised when a stored value cannot be decrypted (another key, or tampered with). */
export class SecretDecryptionError extends Error {}

/**
 * AES-256-GCM with the key from AMBIENT_SECRETS_KEY. A value is stored as
 * `version | key id | iv | tag | ciphertext`; the team id is authenticated data, so a ciphertext
 * copied into another team's row does not decrypt. The key id (4 bytes of the key's SHA-256)
 * selects the key that decrypts: the current one or one of AMBIENT_SECRETS_PREVIOUS_KEYS during a
 * key rotation; a value under a key the server does not have is named, not reported as tampered.
 */
@Injectable()
export class SecretCipher {
  private readonly key: Buffer | null;
  private readonly keyId: Buffer | null;
  /** Every key that decrypts, by hex key id (the current one first). */
  private readonly keysById = new Map<string, Buffer>();

  constructor(
    @Inject(APP_CONFIG)
    config: Pick<AppConfig, 'secretsKey'> & Partial<Pick<AppConfig, 'secretsPreviousKeys'>>,
  ) {
    this.key = config.secretsKey ?? null;
    this.keyId = this.key ? keyIdOf(this.key) : null;
    for (const key of this.key ? [this.key, ...(config.secretsPreviousKeys ?? [])] : []) {
      this.keysById.set(keyIdOf(key).toString('hex'), key);
    }
  }

  get enabled(): boolean {
    return this.key !== null;
  }

  /** Hex id of the key new values are encrypted with. */
  get currentKeyId(): string | null {
    return this.keyId?.toString('hex') ?? null;
  }

  /** Refuses with a clear 503 when the operator has not configured a key. */
  assertEnabled(): void {
    if (!this.key) {
      throw new ApiError(
        'resource_unavailable',
        'team secrets are disabled on this server: the operator must set AMBIENT_SECRETS_KEY',
      );
    }
  }

  encrypt(plaintext: string, teamId: string): Buffer {
    this.assertEnabled();
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key!, iv);
    cipher.setAAD(aad(teamId));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), this.keyId!, iv, cipher.getAuthTag(), body]);
  }

  /** True when `stored` was encrypted with another key than the current one. */
  isStale(stored: Buffer): boolean {
    return !stored.subarray(1, 1 + KEY_ID_BYTES).equals(this.keyId!);
  }

  decrypt(stored: Buffer, teamId: string): string {
    this.assertEnabled();
    if (stored.length < HEADER_BYTES || stored[0] !== VERSION) {
      throw new SecretDecryptionError('stored secret has an unknown format');
    }
    const keyId = stored.subarray(1, 1 + KEY_ID_BYTES).toString('hex');
    const key = this.keysById.get(keyId);
    if (!key) {
      throw new SecretDecryptionError(
        `stored secret was encrypted with a key this server does not have (key id ${keyId}): set that key as AMBIENT_SECRETS_KEY or in AMBIENT_SECRETS_PREVIOUS_KEYS`,
      );
    }
    const iv = stored.subarray(1 + KEY_ID_BYTES, 1 + KEY_ID_BYTES + IV_BYTES);
    const tag = stored.subarray(HEADER_BYTES - TAG_BYTES, HEADER_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAAD(aad(teamId));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([
        decipher.update(stored.subarray(HEADER_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretDecryptionError('stored secret failed authentication (tampered or moved)');
    }
  }
}

function keyIdOf(key: Buffer): Buffer {
  return createHash('sha256').update(key).digest().subarray(0, KEY_ID_BYTES);
}

function aad(teamId: string): Buffer {
  return Buffer.from(`ambient-team-secret:${teamId}`, 'utf8');
}
