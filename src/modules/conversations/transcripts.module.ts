import { Module } from '@nestjs/common';
import { TranscriptWriter } from './transcript-writer.service';

/** Writing transcripts: for whatever ends executions, and snapshots of runs still under way. */
@Module({ providers: [TranscriptWriter], exports: [TranscriptWriter] })
export class TranscriptsModule {}
