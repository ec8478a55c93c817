import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBase64,
  IsBoolean,
  IsIn,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsNumber,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { AgentConfigDto } from '../../run-config';
import { AMBIENT_EXTENSION } from '../../../common/openapi-extension';
import { MAX_USD } from '../../limits';
import { ValidateNestedEach, ValidateNestedObject } from '../../../common/errors/validation';

export const RUN_MODES = ['normal', 'plan', 'orchestrate'] as const;

@ApiSchema({ name: 'AttachmentInput' })
export class AttachmentInputDto {
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(255) file_name: string;

  @ApiProperty({ description: 'Image types: image/jpeg, image/png, image/gif, image/webp' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(128)
  mime_type: string;

  @ApiProperty({ format: 'byte', description: 'Base64-encoded content' })
  @IsBase64()
  data: string;
}

/** alpha.8 clients send `images` instead of `attachments`. */
@ApiSchema({ name: 'ImageInput' })
export class ImageInputDto {
  @ApiProperty({ format: 'byte' }) @IsBase64() data: string;

  @ApiProperty({ enum: ['image/jpeg', 'image/png', 'image/gif', 'image/webp'] })
  @IsIn(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])
  mime_type: string;
}

@ApiSchema({ name: 'RunAgentRequest' })
export class CreateRunDto {
  @ApiPropertyOptional({ description: 'Required unless a skill or conversation_id is given' })
  @IsOptional()
  @IsString()
  @MaxLength(200_000)
  prompt?: string;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) title?: string;

  @ApiPropertyOptional({ description: 'Skill spec; takes precedence over config.skill_spec' })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  skill?: string;

  @ApiPropertyOptional({ type: AgentConfigDto })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => AgentConfigDto)
  config?: AgentConfigDto;

  @ApiPropertyOptional() @IsOptional() @IsBoolean() team?: boolean;
  @ApiPropertyOptional() @IsOptional() @IsString() agent_identity_uid?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() conversation_id?: string;

  @ApiPropertyOptional({ type: [AttachmentInputDto], maxItems: 5 })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(5)
  @ValidateNestedEach()
  @Type(() => AttachmentInputDto)
  attachments?: AttachmentInputDto[];

  @ApiPropertyOptional({ type: [ImageInputDto], deprecated: true })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(5)
  @ValidateNestedEach()
  @Type(() => ImageInputDto)
  images?: ImageInputDto[];

  @ApiPropertyOptional() @IsOptional() @IsString() parent_run_id?: string;
  @ApiPropertyOptional() @IsOptional() @IsBoolean() interactive?: boolean;

  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: Number,
    minimum: 0,
    maximum: MAX_USD,
    description:
      "This run's cost cap (USD, inference at catalogue prices); the lower of it and the team's " +
      "(agent's) max_run_cost_usd applies. Reaching it stops the run at its next model call",
  })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MAX_USD)
  max_cost_usd?: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'At most 20 keys of 1-64 bytes [a-zA-Z0-9._-]; values up to 256 bytes',
  })
  @IsOptional()
  @IsObject()
  metadata?: Record<string, string>;

  @ApiPropertyOptional({ enum: RUN_MODES })
  @IsOptional()
  @IsIn(RUN_MODES)
  mode?: (typeof RUN_MODES)[number];

  @ApiPropertyOptional() @IsOptional() @IsString() on_behalf_of?: string;
}

@ApiSchema({ name: 'RunAgentResponse' })
export class RunAgentResponseDto {
  @ApiProperty() run_id: string;
  @ApiProperty({ deprecated: true }) task_id: string;
  @ApiProperty({ example: 'QUEUED' }) state: string;
  @ApiPropertyOptional() at_capacity?: boolean;
}
