import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SqlRepository } from '../../database/sql-repository';

/** The `pending_blob_deletions` outbox (PendingBlobDeletion). */
@Injectable()
export class PendingBlobDeletionRepository extends SqlRepository {
  /** Adds blob keys to delete, in the caller's transaction; a key already pending stays once. */
  async add(manager: EntityManager, keys: string[], now: Date): Promise<void> {
    if (keys.length === 0) return;
    await manager.query(
      'INSERT IGNORE INTO pending_blob_deletions (blob_key, created_at) VALUES ?',
      [keys.map((key) => [key, now])],
    );
  }

  /** Up to `limit` pending keys, oldest first. */
  async oldest(limit: number): Promise<string[]> {
    const rows = (await this.db().query(
      `SELECT blob_key FROM pending_blob_deletions ORDER BY created_at, blob_key LIMIT ${Number(limit)}`,
    )) as { blob_key: string }[];
    return rows.map((row) => row.blob_key);
  }

  /** Forgets keys whose blobs are deleted. */
  async remove(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.db().query('DELETE FROM pending_blob_deletions WHERE blob_key IN (?)', [keys]);
  }
}
