/** What other modules may use of artifacts/: they import it from here only (ESLint rule ambient/import-through-index). */
export { parseArtifactInput } from './artifact-input';
export { artifactBlobKey, ArtifactWriter } from './artifact-writer.service';
export { ArtifactsModule } from './artifacts.module';
export { RunArtifactRepository } from './run-artifact.repository';
export { ConversationRuns } from './conversation-runs';
export { ReportArtifactDto, ReportArtifactResponseDto } from './report-artifact.dto';
export { REPORT_ARTIFACT_TOOL, runReportArtifactTool } from './report-artifact.tool';
export { ARTIFACT_TYPES, RunArtifact } from './run-artifact.entity';
export { runHasArtifactOfType } from './run-artifact.repository';
export type { ArtifactType } from './run-artifact.entity';
