import { Module } from '@nestjs/common';
import { RunsModule } from '../runs';
import { TranscriptWriter } from './transcript-writer.service';

/** Writing transcripts: for whatever ends executions, and snapshots of runs still under way. */
@Module({ imports: [RunsModule], providers: [TranscriptWriter], exports: [TranscriptWriter] })
export class TranscriptsModule {}
