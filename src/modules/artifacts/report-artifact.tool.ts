import { basename } from 'node:path';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { ApiError } from '../../common/errors/api-error';
import { readTenantFile, TenantFileError } from '../../common/tenant-files/tenant-files';
import { MAX_ARTIFACT_BYTES } from './artifact-input';

/** The `report_artifact` tool the built-in harness offers when the execution can report. */
export const REPORT_ARTIFACT_TOOL: ChatCompletionFunctionTool = {
  type: 'function',
  function: {
    name: 'report_artifact',
    description:
      'Record an artifact of this run for the user: a PLAN (markdown in "content"), a ' +
      'PULL_REQUEST ("url", "branch"), a FILE or SCREENSHOT (a workspace file in "path") or an ' +
      'EXTERNAL_REFERENCE ("reference_type", "url", optional "title", "metadata"). Returns JSON ' +
      '{artifact_uid} or an error.',
    parameters: {
      type: 'object',
      properties: {
        artifact_type: {
          type: 'string',
          enum: ['PLAN', 'PULL_REQUEST', 'FILE', 'SCREENSHOT', 'EXTERNAL_REFERENCE'],
        },
        content: { type: 'string', description: 'PLAN: the plan in markdown.' },
        title: { type: 'string' },
        url: { type: 'string' },
        branch: { type: 'string' },
        path: { type: 'string', description: 'FILE, SCREENSHOT: path relative to the workspace.' },
        mime_type: { type: 'string' },
        description: { type: 'string' },
        reference_type: { type: 'string' },
        metadata: { type: 'object' },
      },
      required: ['artifact_type'],
    },
  },
};

export type ArtifactReporter = (
  report: Record<string, unknown>,
) => Promise<{ artifactUid: string }>;

/**
 * Runs the tool: a `path` is read from the workspace (never outside it) and sent as the file's
 * content; validation errors come back to the model as text so it can correct itself.
 */
export async function runReportArtifactTool(
  args: Record<string, unknown>,
  workspaceDir: string,
  report: ArtifactReporter,
): Promise<string> {
  try {
    const { path, ...fields } = args;
    if (path !== undefined) {
      if (typeof path !== 'string' || path === '') return 'Error: "path" must be a string.';
      // By descriptor, never following a link: the agent's sandbox may race the workspace.
      const data = await readTenantFile(
        { root: workspaceDir, label: 'workspace' },
        path,
        MAX_ARTIFACT_BYTES,
      );
      fields.content_base64 = data.toString('base64');
      fields.filepath ??= path;
      fields.filename ??= basename(path);
    }
    const { artifactUid } = await report(fields);
    return JSON.stringify({ artifact_uid: artifactUid });
  } catch (err) {
    if (err instanceof ApiError) return `Error: ${err.detail ?? err.message}`;
    if (err instanceof TenantFileError) {
      if (err.problem === 'too_large') return 'Error: the file is larger than 20 MiB.';
      return `Error: "path" is not a file in the workspace (${err.message}).`;
    }
    throw err;
  }
}
