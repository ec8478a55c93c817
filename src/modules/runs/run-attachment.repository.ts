import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RunAttachment } from './entities/run-attachment.entity';

/** The `run_attachments` rows other modules read (an execution's first context). */
@Injectable()
export class RunAttachmentRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  forRun(runId: string): Promise<RunAttachment[]> {
    return this.dataSource.getRepository(RunAttachment).findBy({ runId });
  }
}
