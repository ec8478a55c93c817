import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asciiId } from '../../../database/column-types';

@Entity('run_attachments')
@Index('idx_run_attachments_run', ['runId'])
export class RunAttachment {
  @PrimaryColumn(asciiId(36))
  id: string;

  @Column({ name: 'run_id', ...asciiId(36) })
  runId: string;

  @Column({ name: 'file_name', type: 'varchar', length: 255 })
  fileName: string;

  @Column({ name: 'mime_type', type: 'varchar', length: 128 })
  mimeType: string;

  @Column({ name: 'size_bytes', type: 'int' })
  sizeBytes: number;

  @Column({ type: 'mediumblob' })
  data: Buffer;

  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt: Date;
}
