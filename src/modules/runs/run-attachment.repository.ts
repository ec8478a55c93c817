import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { selectEntities } from '../../database/entity-select';
import { RunAttachment } from './entities/run-attachment.entity';

/** The `run_attachments` rows: a run's attachments (an execution's first context, the API's list). */
@Injectable()
export class RunAttachmentRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  forRun(runId: string): Promise<RunAttachment[]> {
    return selectEntities(this.dataSource, RunAttachment, { where: 'run_id = ?', params: [runId] });
  }

  /** The run's attachments without their bytes, oldest first (those of one request by file name). */
  listed(runId: string): Promise<Pick<RunAttachment, 'id' | 'fileName' | 'mimeType'>[]> {
    return this.dataSource.getRepository(RunAttachment).find({
      select: { id: true, fileName: true, mimeType: true },
      where: { runId },
      order: { createdAt: 'ASC', fileName: 'ASC', id: 'ASC' },
    });
  }

  /** The attachment's bytes, null for no such attachment. */
  async data(attachmentId: string): Promise<Buffer | null> {
    const row = await this.dataSource
      .getRepository(RunAttachment)
      .findOne({ select: { id: true, data: true }, where: { id: attachmentId } });
    return row ? row.data : null;
  }
}
