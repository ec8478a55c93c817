import { Module } from '@nestjs/common';
import { TranscriptWriter } from './transcript-writer.service';

/** Writing transcripts, for whatever ends executions (the run worker, remote executions). */
@Module({ providers: [TranscriptWriter], exports: [TranscriptWriter] })
export class TranscriptsModule {}
