import { ApiError } from '../../common/errors/api-error';
import { ARTIFACT_TYPES, ArtifactType } from './run-artifact.entity';

/** The largest file or screenshot a run may report (decoded). */
export const MAX_ARTIFACT_BYTES = 20 * 1024 * 1024;
const PR_STATUSES = ['open', 'draft', 'merged', 'closed', 'unknown'];

/** A validated artifact report, before it is stored. */
export type ArtifactInput = { isPublic: boolean } & (
  | { type: 'PLAN'; title?: string; content: string }
  | { type: 'PULL_REQUEST'; url: string; branch: string; status: string }
  | {
      type: 'FILE';
      file: Buffer;
      filename: string;
      filepath: string;
      mimeType: string;
      description?: string;
      title?: string;
    }
  | { type: 'SCREENSHOT'; file: Buffer; mimeType: string; description?: string }
  | {
      type: 'EXTERNAL_REFERENCE';
      referenceType: string;
      url: string;
      title?: string;
      metadata?: Record<string, unknown>;
    }
);

/**
 * Validates an artifact report as sent over HTTP (`POST /harness-support/artifacts`) or by the
 * `report_artifact` tool: `artifact_type` picks the fields; files come base64 encoded in
 * `content_base64`. The type's fields are top-level, or — Oz's `ReportArtifactRequest`, e.g.
 * `{artifact_type: 'PULL_REQUEST', data: {url, branch}}` — inside `data`, and errors then name
 * `data.<field>`. Throws `invalid_request` naming the first bad field.
 */
export function parseArtifactInput(raw: unknown): ArtifactInput {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw ApiError.invalid('body', 'must be a JSON object');
  }
  const top = raw as Record<string, unknown>;
  const type = top.artifact_type;
  if (typeof type !== 'string' || !ARTIFACT_TYPES.includes(type as ArtifactType)) {
    throw ApiError.invalid('artifact_type', `must be one of ${ARTIFACT_TYPES.join(', ')}`);
  }
  if (top.is_public !== undefined && typeof top.is_public !== 'boolean') {
    throw ApiError.invalid('is_public', 'must be a boolean');
  }
  const isPublic = top.is_public === true;
  const enveloped = top.data !== undefined;
  if (enveloped && (!top.data || typeof top.data !== 'object' || Array.isArray(top.data))) {
    throw ApiError.invalid('data', 'must be an object');
  }
  const body = enveloped ? (top.data as Record<string, unknown>) : top;
  const invalid = (field: string, problem: string) =>
    ApiError.invalid(enveloped ? `data.${field}` : field, problem);
  const str = (field: string, max: number, required: boolean): string | undefined => {
    const value = body[field];
    if (value === undefined || value === null) {
      if (required) throw invalid(field, 'is required');
      return undefined;
    }
    if (typeof value !== 'string' || (required && value.trim() === '')) {
      throw invalid(field, 'must be a non-empty string');
    }
    if (value.length > max) throw invalid(field, `must be at most ${max} characters`);
    return value;
  };
  const url = (field: string): string => {
    const value = str(field, 2048, true)!;
    if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) {
      throw invalid(field, 'must be an http(s) URL');
    }
    return value;
  };
  const file = (): Buffer => {
    const encoded = str('content_base64', Math.ceil((MAX_ARTIFACT_BYTES * 4) / 3) + 4, true)!;
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) {
      throw invalid('content_base64', 'must be base64');
    }
    return Buffer.from(encoded, 'base64');
  };
  const mimeType = (fallback?: string): string => {
    const value = str('mime_type', 255, fallback === undefined) ?? fallback!;
    if (!/^[a-z0-9.+-]+\/[a-z0-9.+-]+$/i.test(value)) {
      throw invalid('mime_type', 'must be a MIME type such as text/plain');
    }
    return value;
  };

  switch (type as ArtifactType) {
    case 'PLAN':
      return {
        isPublic,
        type: 'PLAN',
        title: str('title', 255, false),
        content: str('content', 1_000_000, true)!,
      };
    case 'PULL_REQUEST': {
      const status = str('status', 16, false) ?? 'open';
      if (!PR_STATUSES.includes(status)) {
        throw invalid('status', `must be one of ${PR_STATUSES.join(', ')}`);
      }
      return {
        isPublic,
        type: 'PULL_REQUEST',
        url: url('url'),
        branch: str('branch', 255, true)!,
        status,
      };
    }
    case 'FILE': {
      const filepath = str('filepath', 1024, false) ?? str('filename', 255, true)!;
      const filename = str('filename', 255, false) ?? filepath.split('/').pop()!;
      if (/[/\\\0]/.test(filename) || filename === '.' || filename === '..') {
        throw invalid('filename', 'must be a plain file name');
      }
      return {
        isPublic,
        type: 'FILE',
        file: file(),
        filename,
        filepath,
        mimeType: mimeType('application/octet-stream'),
        description: str('description', 2000, false),
        title: str('title', 255, false),
      };
    }
    case 'SCREENSHOT': {
      const mime = mimeType();
      if (!mime.startsWith('image/')) throw invalid('mime_type', 'must be an image type');
      return {
        isPublic,
        type: 'SCREENSHOT',
        file: file(),
        mimeType: mime,
        description: str('description', 2000, false),
      };
    }
    case 'EXTERNAL_REFERENCE': {
      const metadata = body.metadata;
      if (
        metadata !== undefined &&
        (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))
      ) {
        throw invalid('metadata', 'must be an object');
      }
      return {
        isPublic,
        type: 'EXTERNAL_REFERENCE',
        referenceType: str('reference_type', 64, true)!,
        url: url('url'),
        title: str('title', 255, false),
        metadata: metadata as Record<string, unknown> | undefined,
      };
    }
  }
}
