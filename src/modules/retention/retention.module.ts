import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ArtifactsModule } from '../artifacts';
import { RunsModule } from '../runs';
import { PendingBlobDeletion } from './pending-blob-deletion.entity';
import { PendingBlobDeletionRepository } from './pending-blob-deletion.repository';
import { RunContentRetentionSweeper } from './run-content-retention.sweeper';
import { SweepPosition } from './sweep-position.entity';
import { SweepPositionRepository } from './sweep-position.repository';

/** What Ambient deletes of runs on its own (api role): AMBIENT_RUN_CONTENT_RETENTION_DAYS. */
@Module({
  imports: [
    TypeOrmModule.forFeature([PendingBlobDeletion, SweepPosition]),
    RunsModule,
    ArtifactsModule,
  ],
  providers: [RunContentRetentionSweeper, PendingBlobDeletionRepository, SweepPositionRepository],
})
export class RetentionModule {}
