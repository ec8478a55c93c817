import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity('run_attachments')
export class RunAttachment {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'run_id', type: 'varchar', length: 36 })
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
