import { MigrationInterface, QueryRunner } from 'typeorm';
import type { AppConfig } from '../src/config/app-config';
import type { McpSecretValue } from '../src/modules/run-config/run-config.types';
import { rewriteStoredMcpValues } from '../src/modules/secrets/mcp-secret-columns';
import { isSealedValue } from '../src/modules/secrets/mcp-secret-values';
import { SecretCipher } from '../src/modules/secrets/secret-cipher';

export type SecretKeys = Pick<AppConfig, 'secretsKey'> &
  Partial<Pick<AppConfig, 'secretsPreviousKeys'>>;

/**
 * MCP `env` and `headers` values of runs, schedules and agent identities were stored in clear:
 * each string becomes `{"ciphertext": ...}` under AMBIENT_SECRETS_KEY, bound to its row's team (as
 * the server now stores them). Batched by id, idempotent (a sealed value is left alone). TypeORM
 * constructs migrations without arguments: `withKeys` gives this one the server's keys
 * (migrations/index.ts). Without a key it fails only if there is a clear value to encrypt.
 * `down` decrypts the sealed values back into strings (references to team secrets stay).
 */
export class McpSecretValues1763910000000 implements MigrationInterface {
  name = 'McpSecretValues1763910000000';

  constructor(private readonly keys: SecretKeys | null = null) {}

  static withKeys(keys: SecretKeys): typeof McpSecretValues1763910000000 {
    return class extends McpSecretValues1763910000000 {
      constructor() {
        super(keys);
      }
    };
  }

  async up(q: QueryRunner): Promise<void> {
    const cipher = this.keys?.secretsKey ? new SecretCipher(this.keys) : null;
    await rewriteStoredMcpValues(
      (work) => work((sql, params) => q.query(sql, params)),
      (value, row): McpSecretValue => {
        if (typeof value !== 'string') return value;
        if (!cipher) {
          throw new Error(
            `${row.table} ${row.id} holds an MCP env/headers value in clear, and there is no AMBIENT_SECRETS_KEY to encrypt it with: set the key (the server's) and migrate again`,
          );
        }
        return { ciphertext: cipher.encrypt(value, row.teamId).toString('base64') };
      },
    );
  }

  async down(q: QueryRunner): Promise<void> {
    const cipher = this.keys?.secretsKey ? new SecretCipher(this.keys) : null;
    await rewriteStoredMcpValues(
      (work) => work((sql, params) => q.query(sql, params)),
      (value, row): McpSecretValue => {
        if (!isSealedValue(value)) return value;
        if (!cipher) {
          throw new Error(
            `${row.table} ${row.id} holds an encrypted MCP value and there is no AMBIENT_SECRETS_KEY to decrypt it with`,
          );
        }
        return cipher.decrypt(Buffer.from(value.ciphertext, 'base64'), row.teamId);
      },
    );
  }
}
