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
 * lets a wrong key be named instead of failing as "tampered".
 */
@Injectable()
export class SecretCipher {
  private readonly key: Buffer | null;
  private readonly keyId: Buffer | null;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'secretsKey'>) {
    this.key = config.secretsKey ?? null;
    this.keyId = this.key ? createHash('sha256').update(this.key).digest().subarray(0, 4) : null;
  }

  get enabled(): boolean {
    return this.key !== null;
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

  decrypt(stored: Buffer, teamId: string): string {
    this.assertEnabled();
    if (stored.length < HEADER_BYTES || stored[0] !== VERSION) {
      throw new SecretDecryptionError('stored secret has an unknown format');
    }
    const keyId = stored.subarray(1, 1 + KEY_ID_BYTES);
    if (!keyId.equals(this.keyId!)) {
      throw new SecretDecryptionError(
        `stored secret was encrypted with another AMBIENT_SECRETS_KEY (key id ${keyId.toString('hex')})`,
      );
    }
    const iv = stored.subarray(1 + KEY_ID_BYTES, 1 + KEY_ID_BYTES + IV_BYTES);
    const tag = stored.subarray(HEADER_BYTES - TAG_BYTES, HEADER_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key!, iv);
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

function aad(teamId: string): Buffer {
  return Buffer.from(`ambient-team-secret:${teamId}`, 'utf8');
}
