import { Controller, Get, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { RequirePermission } from '../../common/auth/require-permission.decorator';
import type { Principal } from '../../common/auth/principal';
import { ListAuditEventsResponseDto } from './audit-event.dto';
import { toAuditEventDto } from './audit-event.mapper';
import { AUDIT_OUTCOMES } from './audit-vocabulary';
import { AuditEventsQuery } from './audit-events.repository';
import {
  DEFAULT_AUDIT_PAGE,
  MAX_AUDIT_PAGE,
  parseAuditEventListParams,
} from './audit-events.params';

@ApiTags('audit')
@ApiBearerAuth()
@Controller('audit-events')
export class AuditEventsController {
  constructor(private readonly query: AuditEventsQuery) {}

  @Get()
  @RequirePermission('audit.read')
  @ApiOperation({
    operationId: 'listAuditEvents',
    summary: "The team's audit log, newest first (team admins)",
    description:
      'One event per change made through the API and per refused attempt. Cursor pages: pass ' +
      'page_info.next_cursor as `cursor` with the same filters.',
  })
  @ApiProblems(400, 401, 403)
  @ApiQuery({
    name: 'action',
    required: false,
    type: String,
    description: '"run.create", or "run.*"',
  })
  @ApiQuery({ name: 'actor_id', required: false, type: String })
  @ApiQuery({ name: 'target_type', required: false, type: String })
  @ApiQuery({ name: 'target_id', required: false, type: String })
  @ApiQuery({ name: 'outcome', required: false, enum: AUDIT_OUTCOMES })
  @ApiQuery({ name: 'since', required: false, type: String, description: 'RFC 3339, inclusive' })
  @ApiQuery({ name: 'until', required: false, type: String, description: 'RFC 3339, exclusive' })
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: MAX_AUDIT_PAGE, default: DEFAULT_AUDIT_PAGE },
    description: `Events per page (1-${MAX_AUDIT_PAGE}, default ${DEFAULT_AUDIT_PAGE})`,
  })
  @ApiQuery({ name: 'cursor', required: false, type: String })
  @ApiOkResponse({ type: ListAuditEventsResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
  ): Promise<ListAuditEventsResponseDto> {
    const params = parseAuditEventListParams(req.query as Record<string, unknown>);
    const { events, nextCursor } = await this.query.page(principal.teamId, params);
    return {
      events: events.map(toAuditEventDto),
      page_info: nextCursor
        ? { has_next_page: true, next_cursor: nextCursor }
        : { has_next_page: false, next_cursor: '' },
    };
  }
}
