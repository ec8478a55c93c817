import { randomBytes } from 'node:crypto';
import { ApiError } from '../../common/errors/api-error';
import { SecretCipher, SecretDecryptionError } from './secret-cipher';

describe('SecretCipher (AES-256-GCM)', () => {
  const cipher = new SecretCipher({ secretsKey: randomBytes(32) });

  it('round-trips a value and never stores it in clear', () => {
    const stored = cipher.encrypt('s3cr3t-välue', 'team1');
    expect(stored.includes(Buffer.from('s3cr3t'))).toBe(false);
    expect(cipher.decrypt(stored, 'team1')).toBe('s3cr3t-välue');
  });

  it('uses a fresh IV for every encryption', () => {
    expect(cipher.encrypt('same', 't').equals(cipher.encrypt('same', 't'))).toBe(false);
  });

  it("refuses a ciphertext moved to another team's row", () => {
    const stored = cipher.encrypt('value', 'team1');
    expect(() => cipher.decrypt(stored, 'team2')).toThrow(SecretDecryptionError);
  });

  it('refuses a tampered ciphertext', () => {
    const stored = cipher.encrypt('value', 'team1');
    stored[stored.length - 1] ^= 1;
    expect(() => cipher.decrypt(stored, 'team1')).toThrow(/failed authentication/);
  });

  it('names a value encrypted with a key the server does not have', () => {
    const other = new SecretCipher({ secretsKey: randomBytes(32) });
    expect(() => other.decrypt(cipher.encrypt('v', 't'), 't')).toThrow(
      /a key this server does not have \(key id [0-9a-f]{8}\)/,
    );
  });

  it('decrypts with a previous key during a rotation and encrypts with the current one', () => {
    const oldKey = randomBytes(32);
    const before = new SecretCipher({ secretsKey: oldKey });
    const stored = before.encrypt('kept', 't');
    const rotated = new SecretCipher({
      secretsKey: randomBytes(32),
      secretsPreviousKeys: [oldKey],
    });
    expect(rotated.isStale(stored)).toBe(true);
    expect(rotated.decrypt(stored, 't')).toBe('kept');
    const fresh = rotated.encrypt('kept', 't');
    expect(rotated.isStale(fresh)).toBe(false);
    expect(() => before.decrypt(fresh, 't')).toThrow(SecretDecryptionError);
  });

  it('answers 503 when no key is configured', () => {
    const disabled = new SecretCipher({});
    expect(disabled.enabled).toBe(false);
    expect(() => disabled.encrypt('v', 't')).toThrow(ApiError);
    try {
      disabled.encrypt('v', 't');
    } catch (err) {
      expect((err as ApiError).status).toBe(503);
      expect((err as ApiError).detail).toContain('AMBIENT_SECRETS_KEY');
    }
  });
});
