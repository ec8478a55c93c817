import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { PageInfoDto } from '../../common/page-info.dto';
import { AUDIT_ACTOR_TYPES, AUDIT_OUTCOMES } from './audit-vocabulary';

@ApiSchema({ name: 'AuditOnBehalfOf' })
export class AuditOnBehalfOfDto {
  @ApiProperty({ enum: ['user', 'agent'] }) type: string;
  @ApiProperty({ description: 'The user or agent uid' }) id: string;
  @ApiProperty({ type: String, nullable: true }) name: string | null;
}

@ApiSchema({ name: 'AuditActor' })
export class AuditActorDto {
  @ApiProperty({ enum: AUDIT_ACTOR_TYPES }) type: string;
  @ApiProperty({ description: 'The key id (api_key), user or agent uid, run id, or "system"' })
  id: string;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The key's name (api_key), the person's or agent's name, …",
  })
  name: string | null;
  @ApiProperty({ type: String, nullable: true }) role: string | null;
  @ApiProperty({
    type: AuditOnBehalfOfDto,
    nullable: true,
    description: 'For an API key: the user or agent identity it belongs to',
  })
  on_behalf_of: AuditOnBehalfOfDto | null;
}

@ApiSchema({ name: 'AuditTarget' })
export class AuditTargetDto {
  @ApiProperty({ example: 'run' }) type: string;
  @ApiProperty({ type: String, nullable: true }) id: string | null;
}

@ApiSchema({ name: 'AuditEvent' })
export class AuditEventDto {
  @ApiProperty() id: string;
  @ApiProperty({ format: 'date-time' }) occurred_at: string;
  @ApiProperty({ type: AuditActorDto }) actor: AuditActorDto;
  @ApiProperty({ description: '"<resource>.<verb>", e.g. run.create, webhook.rotate_secret' })
  action: string;
  @ApiProperty({ type: AuditTargetDto, nullable: true }) target: AuditTargetDto | null;
  @ApiProperty({ enum: AUDIT_OUTCOMES }) outcome: string;
  @ApiProperty({ type: String, nullable: true }) request_id: string | null;
  @ApiProperty({ type: String, nullable: true }) ip: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'What changed; never a secret value',
  })
  details: Record<string, unknown>;
}

@ApiSchema({ name: 'ListAuditEventsResponse' })
export class ListAuditEventsResponseDto {
  @ApiProperty({ type: [AuditEventDto] }) events: AuditEventDto[];
  @ApiProperty({ type: PageInfoDto }) page_info: PageInfoDto;
}
