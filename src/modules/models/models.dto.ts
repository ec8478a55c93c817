import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { AMBIENT_EXTENSION } from '../../common/openapi-extension';

@ApiSchema({ name: 'ModelInfo' })
export class ModelInfoDto {
  @ApiProperty({ example: 'gpt-5-4-high' }) id: string;
  @ApiProperty() display_name: string;
  @ApiProperty({ enum: ['OPENAI', 'ANTHROPIC', 'GOOGLE', 'UNKNOWN'] }) provider: string;
  @ApiProperty() vision_supported: boolean;
  @ApiPropertyOptional() description?: string;
  @ApiPropertyOptional() reasoning_level?: string;
  @ApiPropertyOptional({
    enum: ['PROVIDER_OUTAGE', 'OUT_OF_REQUESTS', 'ADMIN_DISABLED', 'REQUIRES_UPGRADE'],
  })
  disable_reason?: string;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    description: 'Ambient extension: why the model is disabled',
  })
  disable_detail?: string;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    description:
      'Ambient extension: true when the model is disabled only because its provider key is not ' +
      'set on the server (provider_key_env names the variable); disable_reason is ADMIN_DISABLED',
  })
  missing_provider_key?: boolean;
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    description:
      'Ambient extension: the environment variable the provider key is read from (with ' +
      'missing_provider_key)',
  })
  provider_key_env?: string;
  @ApiProperty({
    ...AMBIENT_EXTENSION,
    description: 'Ambient extension: whether runs may use the model',
  })
  disabled: boolean;
  @ApiProperty({ ...AMBIENT_EXTENSION, description: 'Ambient extension: USD per input token' })
  input_cost_per_token_usd: number;
  @ApiProperty({ ...AMBIENT_EXTENSION, description: 'Ambient extension: USD per output token' })
  output_cost_per_token_usd: number;
}

@ApiSchema({ name: 'ListModelsResponse' })
export class ListModelsResponseDto {
  @ApiProperty() default_model_id: string;
  @ApiProperty({ type: [ModelInfoDto] }) models: ModelInfoDto[];
}
