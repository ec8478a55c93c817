import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
} from 'class-validator';
import { PageInfoDto } from '../../../common/page-info.dto';
import {
  DELIVERY_STATUSES,
  NOTIFICATION_EVENTS,
  NOTIFICATION_FORMATS,
  NotificationEvent,
  NotificationFormat,
} from '../notification-events';

const URL_DESCRIPTION =
  'Where deliveries are POSTed: https (http only to hosts AMBIENT_EGRESS_ALLOW lists); must pass the egress guard';

@ApiSchema({ name: 'CreateNotificationEndpointRequest' })
export class CreateNotificationEndpointDto {
  @ApiProperty({ description: URL_DESCRIPTION, example: 'https://hooks.example.com/ambient' })
  @IsString()
  @MaxLength(2048)
  url: string;

  @ApiProperty({ enum: NOTIFICATION_EVENTS, isArray: true, example: ['run.failed'] })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @IsIn(NOTIFICATION_EVENTS, { each: true })
  events: NotificationEvent[];

  @ApiPropertyOptional({
    enum: NOTIFICATION_FORMATS,
    default: 'standard',
    description: 'standard: a Standard Webhooks JSON envelope; slack: {"text": …} for Slack',
  })
  @IsOptional()
  @IsIn(NOTIFICATION_FORMATS)
  format?: NotificationFormat;

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

@ApiSchema({ name: 'UpdateNotificationEndpointRequest' })
export class UpdateNotificationEndpointDto {
  @ApiPropertyOptional({ description: URL_DESCRIPTION })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  url?: string;

  @ApiPropertyOptional({ enum: NOTIFICATION_EVENTS, isArray: true })
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayUnique()
  @IsIn(NOTIFICATION_EVENTS, { each: true })
  events?: NotificationEvent[];

  @ApiPropertyOptional({ enum: NOTIFICATION_FORMATS })
  @IsOptional()
  @IsIn(NOTIFICATION_FORMATS)
  format?: NotificationFormat;

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;
}

@ApiSchema({ name: 'NotificationEndpoint' })
export class NotificationEndpointDto {
  @ApiProperty() id: string;
  @ApiProperty() url: string;
  @ApiProperty({ enum: NOTIFICATION_EVENTS, isArray: true }) events: string[];
  @ApiProperty({ enum: NOTIFICATION_FORMATS }) format: string;
  @ApiProperty() enabled: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time' }) secret_updated_at: string;
}

@ApiSchema({ name: 'NotificationEndpointWithSecret' })
export class NotificationEndpointWithSecretDto extends NotificationEndpointDto {
  @ApiProperty({
    description:
      'The Standard Webhooks signing secret (whsec_…), shown only in this response: store it now',
  })
  secret: string;
}

@ApiSchema({ name: 'ListNotificationEndpointsResponse' })
export class ListNotificationEndpointsResponseDto {
  @ApiProperty({ type: [NotificationEndpointDto] }) endpoints: NotificationEndpointDto[];
}

@ApiSchema({ name: 'NotificationDelivery' })
export class NotificationDeliveryDto {
  @ApiProperty() id: string;
  @ApiProperty({ description: 'The webhook-id header, the same on every attempt' })
  message_id: string;
  @ApiProperty({ enum: NOTIFICATION_EVENTS }) event: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: string;
  @ApiProperty() attempts: number;
  @ApiProperty({ nullable: true, type: Number, description: "The last attempt's HTTP status" })
  response_code: number | null;
  @ApiProperty({ nullable: true, type: String }) last_error: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' })
  next_attempt_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' })
  last_attempt_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The standard-format body: {type, timestamp, data}',
  })
  payload: Record<string, unknown>;
}

@ApiSchema({ name: 'ListNotificationDeliveriesResponse' })
export class ListNotificationDeliveriesResponseDto {
  @ApiProperty({ type: [NotificationDeliveryDto] }) deliveries: NotificationDeliveryDto[];
  @ApiProperty({ type: PageInfoDto }) page_info: PageInfoDto;
}
