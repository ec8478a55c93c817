import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Principal } from '../../common/auth/principal';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { RequirePermission } from '../../common/auth/require-permission.decorator';
import { ApiError } from '../../common/errors/api-error';
import { ApiProblems } from '../../common/errors/problem.schema';
import { Idempotent } from '../idempotency';
import {
  CreateNotificationEndpointDto,
  ListNotificationDeliveriesResponseDto,
  ListNotificationEndpointsResponseDto,
  NotificationDeliveryDto,
  NotificationEndpointDto,
  NotificationEndpointWithSecretDto,
  UpdateNotificationEndpointDto,
} from './dto/notification-endpoint.dto';
import { toDeliveryDto, toEndpointDto } from './notification-endpoint.mapper';
import { NotificationEndpoints } from './notification-endpoints.service';

@ApiTags('notifications')
@ApiBearerAuth()
@Controller('notification-endpoints')
export class NotificationEndpointsController {
  constructor(private readonly endpoints: NotificationEndpoints) {}

  @Post()
  @RequirePermission('notifications.write')
  @ApiOperation({
    operationId: 'createNotificationEndpoint',
    summary: 'Register an outgoing webhook (its signing secret is shown once)',
  })
  @ApiProblems(400, 401, 403, 409)
  @ApiCreatedResponse({ type: NotificationEndpointWithSecretDto })
  @Idempotent()
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateNotificationEndpointDto,
  ): Promise<NotificationEndpointWithSecretDto> {
    const { endpoint, secret } = await this.endpoints.create(principal, body);
    return { ...toEndpointDto(endpoint), secret };
  }

  @Get()
  @RequirePermission('notifications.read')
  @ApiOperation({
    operationId: 'listNotificationEndpoints',
    summary: "The team's notification endpoints (never their secrets)",
  })
  @ApiProblems(401, 403)
  @ApiOkResponse({ type: ListNotificationEndpointsResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
  ): Promise<ListNotificationEndpointsResponseDto> {
    return { endpoints: (await this.endpoints.list(principal)).map(toEndpointDto) };
  }

  @Get(':id')
  @RequirePermission('notifications.read')
  @ApiOperation({ operationId: 'getNotificationEndpoint', summary: 'A notification endpoint' })
  @ApiProblems(401, 403, 404)
  @ApiOkResponse({ type: NotificationEndpointDto })
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
  ): Promise<NotificationEndpointDto> {
    return toEndpointDto(await this.endpoints.get(principal, id));
  }

  @Patch(':id')
  @RequirePermission('notifications.write')
  @ApiOperation({
    operationId: 'updateNotificationEndpoint',
    summary: 'Change the URL, events, format or enabled flag of an endpoint',
  })
  @ApiProblems(400, 401, 403, 404)
  @ApiOkResponse({ type: NotificationEndpointDto })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: UpdateNotificationEndpointDto,
  ): Promise<NotificationEndpointDto> {
    return toEndpointDto(await this.endpoints.update(principal, id, body));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('notifications.write')
  @ApiOperation({
    operationId: 'deleteNotificationEndpoint',
    summary: 'Delete an endpoint and its delivery log',
  })
  @ApiProblems(401, 403, 404)
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.endpoints.remove(principal, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @RequirePermission('notifications.write')
  @ApiOperation({
    operationId: 'rotateNotificationEndpointSecret',
    summary: 'A new signing secret, shown once; the old one signs nothing from now on',
  })
  @ApiProblems(401, 403, 404)
  @ApiOkResponse({ type: NotificationEndpointWithSecretDto })
  @Idempotent()
  async rotate(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
  ): Promise<NotificationEndpointWithSecretDto> {
    const { endpoint, secret } = await this.endpoints.rotateSecret(principal, id);
    return { ...toEndpointDto(endpoint), secret };
  }

  @Get(':id/deliveries')
  @RequirePermission('notifications.read')
  @ApiOperation({
    operationId: 'listNotificationDeliveries',
    summary: "The endpoint's delivery log, newest first",
  })
  @ApiQuery({ name: 'cursor', required: false })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: '1-100, default 50',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
  })
  @ApiProblems(400, 401, 403, 404)
  @ApiOkResponse({ type: ListNotificationDeliveriesResponseDto })
  async deliveries(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Query('cursor') cursor?: string,
    @Query('limit') limitText?: string,
  ): Promise<ListNotificationDeliveriesResponseDto> {
    const limit = limitText === undefined ? 50 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw ApiError.invalid('limit', 'must be between 1 and 100');
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const rows = await this.endpoints.deliveries(principal, id, limit + 1, before);
    const page = rows.slice(0, limit);
    return {
      deliveries: page.map(toDeliveryDto),
      page_info:
        rows.length > limit
          ? { has_next_page: true, next_cursor: Buffer.from(page.at(-1)!.id).toString('base64url') }
          : { has_next_page: false, next_cursor: '' },
    };
  }

  @Post(':id/deliveries/:deliveryId/resend')
  @HttpCode(202)
  @RequirePermission('notifications.write')
  @ApiOperation({
    operationId: 'resendNotificationDelivery',
    summary: 'Send a failed delivery again (same message id, retries start over)',
  })
  @ApiProblems(401, 403, 404, 409)
  @ApiAcceptedResponse({ type: NotificationDeliveryDto })
  async resend(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<NotificationDeliveryDto> {
    return toDeliveryDto(await this.endpoints.resend(principal, id, deliveryId));
  }
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^\d{1,19}$/.test(id)) throw ApiError.invalid('cursor', 'is not a cursor this list issued');
  return id;
}
