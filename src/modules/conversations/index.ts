/** What other modules may use of conversations/: they import it from here only (ESLint rule ambient/import-through-index). */
export { TranscriptWriter } from './transcript-writer.service';
export { TranscriptsModule } from './transcripts.module';
export { transcriptBlobKeysOf } from './transcript-keys';
