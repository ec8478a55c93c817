/** Route metadata: the answer carries a credential shown once (Idempotent({ shownOnce: true })). */
export const SHOWN_ONCE = 'ambient:idempotent-shown-once';

/** The provider of the cipher that keeps shown-once answers (see IdempotencyModule.withCipher). */
export const SHOWN_ONCE_CIPHER = Symbol('ShownOnceCipher');

/**
 * Encrypts the stored answers that carry a credential shown once: the application gives the
 * secrets cipher (AES-256-GCM under AMBIENT_SECRETS_KEY, the team id authenticated). Without a
 * key (`enabled` false) such answers are not kept at all.
 */
export interface ShownOnceCipher {
  readonly enabled: boolean;
  encrypt(plaintext: string, teamId: string): Buffer;
  /** Throws when `stored` does not decrypt (another key, or tampered with). */
  decrypt(stored: Buffer, teamId: string): string;
}
