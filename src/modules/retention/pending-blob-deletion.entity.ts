import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../database/column-types';

/**
 * A blob to delete: written in the transaction that deleted the rows naming it, and removed once
 * the blob store deleted it, so a crash between the two leaves the deletion to the next sweep.
 */
@Entity('pending_blob_deletions')
@Index('idx_pending_blob_deletions_created', ['createdAt'])
export class PendingBlobDeletion {
  @PrimaryColumn({ name: 'blob_key', ...asciiId(255) })
  blobKey: string;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
