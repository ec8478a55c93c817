import { applyDecorators } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  ApiSchema,
  getSchemaPath,
} from '@nestjs/swagger';

@ApiSchema({ name: 'Error', description: 'RFC 7807 problem details (application/problem+json)' })
export class ProblemDto {
  @ApiProperty({
    format: 'uri',
    example: 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/invalid-request',
  })
  type: string;
  @ApiProperty({ example: 'Invalid request' }) title: string;
  @ApiProperty({ example: 400 }) status: number;
  @ApiProperty({ example: 'Invalid request (limit: must be between 1 and 500)' }) error: string;
  @ApiPropertyOptional({ example: 'limit: must be between 1 and 500' }) detail?: string;
  @ApiPropertyOptional({ example: '/api/v1/agent/runs' }) instance?: string;
  @ApiPropertyOptional() retryable?: boolean;
  @ApiPropertyOptional({ description: 'OpenTelemetry trace id of the request' }) trace_id?: string;
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request; `detail` names the field',
  401: 'Authentication required',
  403: 'Not permitted',
  404: 'Not found (or not visible to the caller)',
  409: 'Conflict with the current state; retry after a moment',
  422: 'Operation not supported for this resource',
};

/** Documents the error answers of an operation with the Oz `Error` schema. */
export function ApiProblems(...statuses: number[]) {
  return applyDecorators(
    ApiExtraModels(ProblemDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: DESCRIPTIONS[status] ?? 'Error',
        content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemDto) } } },
      }),
    ),
  );
}
