import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { AMBIENT_EXTENSION } from '../../common/openapi-extension';
import { registryEnum } from '../../common/registry/registry-openapi';

@ApiSchema({
  name: 'SandboxInfo',
  description: 'Ambient extension: the sandbox backend that runs agent programs on this server',
})
export class SandboxInfoDto {
  @ApiProperty(registryEnum('sandbox_backend')) backend: string;
  @ApiProperty({ description: 'Whether agent programs are isolated from the host' })
  isolated: boolean;
  @ApiPropertyOptional() detail?: string;
}

@ApiSchema({ name: 'HealthResponse' })
export class HealthResponseDto {
  @ApiProperty({ enum: ['ok'] }) status: 'ok';
  @ApiProperty({ enum: ['ok'] }) database: string;
  @ApiProperty({ enum: ['ok'] }) redis: string;
  @ApiProperty({ ...AMBIENT_EXTENSION, type: SandboxInfoDto }) sandbox: SandboxInfoDto;
}

@ApiSchema({
  name: 'HealthIndicator',
  description:
    'Ambient extension: one dependency as @nestjs/terminus reports it (`message` says why it is down; backends add their details)',
})
export class HealthIndicatorDto {
  @ApiProperty({ enum: ['up', 'down'] }) status: 'up' | 'down';
  @ApiPropertyOptional() message?: string;
}

const INDICATOR_MAP = {
  type: 'object',
  additionalProperties: { $ref: '#/components/schemas/HealthIndicator' },
} as const;

@ApiSchema({
  name: 'HealthCheckResult',
  description:
    "Ambient extension: @nestjs/terminus' health check result. `details` holds every dependency checked (database, redis, and sandbox in a worker), `info` those up, `error` those down.",
})
export class HealthCheckResultDto {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down'] }) status: string;
  @ApiPropertyOptional(INDICATOR_MAP) info?: Record<string, HealthIndicatorDto>;
  @ApiPropertyOptional(INDICATOR_MAP) error?: Record<string, HealthIndicatorDto>;
  @ApiProperty(INDICATOR_MAP) details: Record<string, HealthIndicatorDto>;
}
