import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { AMBIENT_EXTENSION } from '../../../../common/openapi-extension';
import { IsArray, IsIn, IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { AUTH_MODES } from '../../auth-modes';
import { registryEnum } from '../../../../common/registry/registry-openapi';
import { ValidateNestedObject } from '../../../../common/errors/validation';

@ApiSchema({ name: 'CreateWebhookRequest' })
export class CreateWebhookDto {
  @ApiProperty({
    description: 'The file name (webhooks/<name>.yaml); cannot be changed later',
    example: 'ci',
  })
  @IsString()
  @Matches(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    message: 'must be 1-64 letters, digits, ".", "_" or "-"',
  })
  name: string;

  @ApiPropertyOptional({ enum: AUTH_MODES, default: 'token' })
  @IsOptional()
  @IsIn(AUTH_MODES)
  auth_mode?: (typeof AUTH_MODES)[number];

  @ApiPropertyOptional({
    ...registryEnum('signature_scheme'),
    description: 'Required for auth_mode signature',
  })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  signature_scheme?: string;

  @ApiPropertyOptional({
    description:
      'Signature mode: the provider signing secret. Blank for standard_webhooks → a whsec_ secret is generated; blank for other schemes → the webhook is created disabled until the secret is set',
  })
  @IsOptional()
  @IsString()
  @MaxLength(4096)
  provider_secret?: string;

  @ApiPropertyOptional({
    description: 'Team secret to create for this webhook (default WEBHOOK_<NAME>_SECRET)',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, {
    message: 'must start with a letter or _ and hold only letters, digits and _',
  })
  secret_name?: string;

  @ApiPropertyOptional({
    description: "Header carrying the sender's delivery id",
    example: 'X-CI-Run-Id',
  })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  delivery_id_header?: string;
}

@ApiSchema({ name: 'Webhook' })
export class WebhookDto {
  @ApiProperty() uid: string;
  @ApiProperty() factory_uid: string;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'Ingress URL; url_token webhooks show a {token} placeholder' })
  url: string;
  @ApiProperty({ enum: AUTH_MODES }) auth_mode: string;
  @ApiProperty({ ...registryEnum('signature_scheme'), nullable: true }) signature_scheme:
    string | null;
  @ApiProperty() secret_name: string;
  @ApiProperty({ nullable: true, type: String }) delivery_id_header: string | null;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time' }) secret_updated_at: string;
}

@ApiSchema({ name: 'WebhookWithSecret', description: 'Returned once, at creation and rotation' })
export class WebhookWithSecretDto extends WebhookDto {
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The generated secret, shown only now (null when the provider issues it)',
  })
  secret: string | null;
}

@ApiSchema({ name: 'ListWebhooksResponse' })
export class ListWebhooksResponseDto {
  @ApiProperty({ type: [WebhookDto] }) webhooks: WebhookDto[];
}

@ApiSchema({ name: 'WebhookDeliveryRun' })
export class DeliveryRunDto {
  @ApiProperty() automation: string;
  @ApiProperty({ nullable: true, type: String }) run_id: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "Why no run started: the refusal's title and detail (null when the run started)",
  })
  error: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'Ambient: the Oz error code of that refusal, e.g. `invalid_request` for a model that is not enabled (null when the run started)',
  })
  error_code: string | null;
}

@ApiSchema({ name: 'WebhookDelivery' })
export class DeliveryDto {
  @ApiProperty({ description: 'Log entry id' }) id: string;
  @ApiProperty({ nullable: true, type: String }) delivery_id: string | null;
  @ApiProperty({
    enum: [
      'Accepted',
      'Duplicate',
      'Rejected (auth)',
      'Rejected (invalid JSON)',
      'Rejected (too large)',
    ],
  })
  status: string;
  @ApiProperty() size_bytes: number;
  @ApiProperty({ format: 'date-time' }) received_at: string;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'date-time' }) evaluated_at?:
    string | null;
  @ApiPropertyOptional({ type: [DeliveryRunDto] }) runs?: DeliveryRunDto[];
  @ApiPropertyOptional({
    ...AMBIENT_EXTENSION,
    type: String,
    description:
      'Ambient extension: on a redelivery, the log entry id of the delivery it redelivered',
  })
  redelivery_of?: string;
  @ApiPropertyOptional({
    description: 'The JSON body (accepted deliveries only): any JSON value',
    nullable: true,
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
    ],
  })
  payload?: unknown;
}

@ApiSchema({ name: 'ListWebhookDeliveriesResponse' })
export class ListDeliveriesResponseDto {
  @ApiProperty({ type: [DeliveryDto] }) deliveries: DeliveryDto[];
  @ApiProperty({ type: 'object', additionalProperties: true }) page_info: {
    has_next_page: boolean;
    next_cursor: string;
  };
}

@ApiSchema({ name: 'WebhookTriggerFilter' })
export class TriggerFilterDto {
  @ApiProperty({ type: [String] }) @IsArray() @IsString({ each: true }) webhook_ids: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: true })
  @IsOptional()
  @IsObject()
  payload?: Record<string, unknown>;
}

@ApiSchema({
  name: 'TestWebhookFilterRequest',
  description: 'Give an automation name, or a filter inline',
})
export class TestFilterDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(128) automation?: string;
  @ApiPropertyOptional({ type: TriggerFilterDto })
  @IsOptional()
  @ValidateNestedObject()
  @Type(() => TriggerFilterDto)
  filter?: TriggerFilterDto;
}

@ApiSchema({ name: 'TestWebhookFilterResponse' })
export class TestFilterResponseDto {
  @ApiProperty({ enum: ['Would trigger', 'Would not trigger'] }) result: string;
  @ApiProperty() would_trigger: boolean;
  @ApiPropertyOptional({ description: 'false when the automation is disabled' })
  automation_enabled?: boolean;
  @ApiProperty({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'Per trigger: the webhook check and the payload check',
  })
  triggers: Record<string, unknown>[];
}
