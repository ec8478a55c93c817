import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { AMBIENT_EXTENSION } from '../../common/openapi-extension';
import { SANDBOX_BACKENDS } from '../sandbox/sandbox.types';

@ApiSchema({
  name: 'SandboxInfo',
  description: 'Ambient extension: the sandbox backend that runs agent programs on this server',
})
export class SandboxInfoDto {
  @ApiProperty({ enum: [...SANDBOX_BACKENDS, 'unavailable'] }) backend: string;
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
