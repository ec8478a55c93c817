import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ARTIFACT_TYPES } from './run-artifact.entity';

/**
 * OpenAPI description of POST /harness-support/artifacts (and /harness-support/report-artifact).
 * The body is validated by `parseArtifactInput`, since which fields are required depends on
 * `artifact_type`.
 */
@ApiSchema({ name: 'ReportArtifactRequest' })
export class ReportArtifactDto {
  @ApiProperty({ enum: ARTIFACT_TYPES }) artifact_type: string;
  @ApiPropertyOptional({ description: 'Readable without an API key (default false)' })
  is_public?: boolean;
  @ApiPropertyOptional({ description: 'PLAN: markdown' }) content?: string;
  @ApiPropertyOptional({ description: 'PLAN, FILE, EXTERNAL_REFERENCE' }) title?: string;
  @ApiPropertyOptional({ description: 'PULL_REQUEST, EXTERNAL_REFERENCE' }) url?: string;
  @ApiPropertyOptional({ description: 'PULL_REQUEST' }) branch?: string;
  @ApiPropertyOptional({ enum: ['open', 'draft', 'merged', 'closed', 'unknown'] })
  status?: string;
  @ApiPropertyOptional({ description: 'FILE, SCREENSHOT: the bytes, base64 (at most 20 MiB)' })
  content_base64?: string;
  @ApiPropertyOptional({ description: 'FILE' }) filename?: string;
  @ApiPropertyOptional({ description: 'FILE' }) filepath?: string;
  @ApiPropertyOptional({ description: 'FILE (default application/octet-stream), SCREENSHOT' })
  mime_type?: string;
  @ApiPropertyOptional({ description: 'FILE, SCREENSHOT' }) description?: string;
  @ApiPropertyOptional({ description: 'EXTERNAL_REFERENCE, e.g. linear_issue' })
  reference_type?: string;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true }) metadata?: object;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      "Oz form: the type's fields (those above except artifact_type and is_public) inside data, " +
      'e.g. PULL_REQUEST {url, branch}; when present, top-level ones are ignored',
  })
  data?: object;
}

@ApiSchema({ name: 'ReportArtifactResponse' })
export class ReportArtifactResponseDto {
  @ApiProperty() artifact_uid: string;
  @ApiProperty({ enum: ARTIFACT_TYPES }) artifact_type: string;
}
