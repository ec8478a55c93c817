import { DataSource } from 'typeorm';
import type { McpSecretValue } from '../run-config';
import { EncryptedValueRepository } from './encrypted-value.repository';
import { rewriteStoredMcpValues, StoredRow } from './mcp-secret-columns';
import { isSealedValue, isSecretReference } from './mcp-secret-values';
import { SecretCipher, SecretDecryptionError } from './secret-cipher';

/** Every column that holds a SecretCipher value, with the team id it is bound to. */
const ENCRYPTED_COLUMNS = [
  { table: 'team_secrets', column: 'ciphertext' },
  { table: 'webhooks', column: 'secret_ciphertext' },
] as const;

const BATCH = 200;

export interface ReencryptionReport {
  table: string;
  /** Values now under the current key. */
  reencrypted: number;
  /** Values under a key the process does not have (left as they are), by row id. */
  unreadable: { id: string; reason: string }[];
}

/**
 * Re-encrypts stored secrets that are not under the current AMBIENT_SECRETS_KEY (after a key
 * rotation, with the old key in AMBIENT_SECRETS_PREVIOUS_KEYS). Each batch is one transaction that
 * locks its rows and re-reads them, so values written concurrently by a running server — always
 * under the current key — are never overwritten with stale ones. Safe to run again.
 */
export class SecretReencryption {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cipher: SecretCipher,
    private readonly stored: EncryptedValueRepository,
  ) {}

  async run(): Promise<ReencryptionReport[]> {
    this.cipher.assertEnabled();
    const reports: ReencryptionReport[] = [];
    for (const { table, column } of ENCRYPTED_COLUMNS) {
      const report: ReencryptionReport = { table, reencrypted: 0, unreadable: [] };
      let after = '';
      for (;;) {
        const batch = await this.reencryptBatch(table, column, after, report);
        if (batch.length < BATCH) break;
        after = batch[batch.length - 1];
      }
      reports.push(report);
    }
    reports.push(...(await this.reencryptMcpValues()));
    return reports;
  }

  /** The MCP `env`/`headers` values of runs, schedules and agent identities (JSON documents). */
  private async reencryptMcpValues(): Promise<ReencryptionReport[]> {
    const unreadable = new Map<string, ReencryptionReport['unreadable']>();
    const reencrypted = await rewriteStoredMcpValues(
      (work) => this.dataSource.transaction((manager) => work(this.stored.queryIn(manager))),
      (value, row) => this.reencryptMcpValue(value, row, unreadable),
    );
    return Object.entries(reencrypted).map(([table, count]) => ({
      table: `${table} (mcp_servers)`,
      reencrypted: count,
      unreadable: unreadable.get(table) ?? [],
    }));
  }

  private reencryptMcpValue(
    value: McpSecretValue,
    row: StoredRow,
    unreadable: Map<string, ReencryptionReport['unreadable']>,
  ): McpSecretValue {
    if (isSecretReference(value)) return value;
    let plaintext: string;
    if (typeof value === 'string') {
      plaintext = value; // stored in clear before the migration had a key: seal it now
    } else if (isSealedValue(value)) {
      const stored = Buffer.from(value.ciphertext, 'base64');
      if (!this.cipher.isStale(stored)) return value;
      try {
        plaintext = this.cipher.decrypt(stored, row.teamId);
      } catch (err) {
        if (!(err instanceof SecretDecryptionError)) throw err;
        const list = unreadable.get(row.table) ?? [];
        list.push({ id: row.id, reason: err.message });
        unreadable.set(row.table, list);
        return value;
      }
    } else {
      return value;
    }
    return { ciphertext: this.cipher.encrypt(plaintext, row.teamId).toString('base64') };
  }

  /** Re-encrypts the stale values among the next BATCH rows after `after`; returns their ids. */
  private reencryptBatch(
    table: string,
    column: string,
    after: string,
    report: ReencryptionReport,
  ): Promise<string[]> {
    return this.dataSource.transaction(async (manager) => {
      const rows = await this.stored.lockedBatch(manager, table, column, after, BATCH);
      for (const row of rows) {
        if (!this.cipher.isStale(row.value)) continue;
        let plaintext: string;
        try {
          plaintext = this.cipher.decrypt(row.value, row.team_id);
        } catch (err) {
          if (!(err instanceof SecretDecryptionError)) throw err;
          report.unreadable.push({ id: row.id, reason: err.message });
          continue;
        }
        await this.stored.setValue(
          manager,
          table,
          column,
          row.id,
          this.cipher.encrypt(plaintext, row.team_id),
        );
        report.reencrypted += 1;
      }
      return rows.map((row) => row.id);
    });
  }
}
