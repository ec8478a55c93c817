import {
  Body,
  Controller,
  Get,
  Header,
  HttpCode,
  Param,
  Post,
  Query,
  StreamableFile,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../../../common/auth/principal.decorator';
import { ApiError } from '../../../common/errors/api-error';
import { ApiProblems } from '../../../common/errors/problem.schema';
import { toRfc3339 } from '../../../common/time';
import { AutomationStore } from '../factories/automation-store.repository';
import type { Principal } from '../../../common/auth/principal';
import { DeliveryLog } from '../delivery-log.repository';
import { STATUS_LABELS, WebhookDelivery } from '../entities/webhook-delivery.entity';
import { JsonValue } from '../filter/payload-filter';
import { validatePayloadFilter } from '../filter/payload-filter-validation';
import { checkTrigger, TriggerFilter } from '../filter/trigger-check';
import {
  DeliveryDto,
  DeliveryRunDto,
  ListDeliveriesResponseDto,
  TestFilterDto,
  TestFilterResponseDto,
} from './dto/webhook.dto';
import { WebhookManagement } from './webhook-management.service';
import { DeliveryRedelivery } from './delivery-redelivery.service';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';

@ApiTags('webhooks')
@ApiBearerAuth()
@Controller('factory/:factoryUid/webhooks/:uid/deliveries')
export class DeliveriesController {
  constructor(
    private readonly webhooks: WebhookManagement,
    private readonly log: DeliveryLog,
    private readonly automations: AutomationStore,
    private readonly redelivery: DeliveryRedelivery,
  ) {}

  @Get()
  @RequirePermission('webhooks.read')
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: 'The delivery log, newest first' })
  @ApiQuery({ name: 'cursor', required: false })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: '1-100, default 50',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
  })
  @ApiProblems(400, 401, 404)
  @ApiOkResponse({ type: ListDeliveriesResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
    @Query('cursor') cursor?: string,
    @Query('limit') limitText?: string,
  ): Promise<ListDeliveriesResponseDto> {
    const limit = limitText === undefined ? 50 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw ApiError.invalid('limit', 'must be between 1 and 100');
    const before = cursor === undefined ? undefined : decodeCursor(cursor);
    const { webhook } = await this.webhooks.get(principal, factoryUid, uid);
    const rows = await this.log.list(webhook.id, limit + 1, before);
    const page = rows.slice(0, limit);
    const runs = await this.runsByEntry(page);
    return {
      deliveries: page.map((d) => toDto(d, runs.get(d.id))),
      page_info:
        rows.length > limit
          ? { has_next_page: true, next_cursor: Buffer.from(page.at(-1)!.id).toString('base64url') }
          : { has_next_page: false, next_cursor: '' },
    };
  }

  @Get(':id')
  @RequirePermission('webhooks.read')
  @ApiOperation({
    operationId: 'getWebhookDelivery',
    summary: 'One delivery; the payload only for Accepted ones',
  })
  @ApiProblems(401, 404)
  @ApiOkResponse({ type: DeliveryDto })
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
    @Param('id') id: string,
  ) {
    const delivery = await this.delivery(principal, factoryUid, uid, id);
    const dto = toDto(delivery, (await this.runsByEntry([delivery])).get(delivery.id));
    if (delivery.payload) dto.payload = JSON.parse(delivery.payload.toString('utf8'));
    return dto;
  }

  @Get(':id/payload')
  @Header('Content-Type', 'application/json')
  @RequirePermission('webhooks.read')
  @ApiOperation({
    operationId: 'getWebhookDeliveryPayload',
    summary: 'The exact body of an Accepted delivery',
  })
  @ApiProduces('application/json')
  @ApiProblems(401, 404)
  @ApiOkResponse({
    description: 'The exact bytes the sender posted (a JSON document)',
    content: { 'application/json': { schema: {} } },
  })
  async payload(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
    @Param('id') id: string,
  ) {
    const delivery = await this.delivery(principal, factoryUid, uid, id);
    if (!delivery.payload)
      throw ApiError.notFound(`payload of delivery ${id} (only Accepted deliveries keep it)`);
    return new StreamableFile(delivery.payload, { type: 'application/json' });
  }

  @Post(':id/redeliver')
  @HttpCode(202)
  @RequirePermission('webhooks.write')
  @ApiOperation({
    operationId: 'redeliverWebhookDelivery',
    summary:
      "Evaluate an Accepted delivery's stored payload again against the automations as they are now, as a new log entry",
  })
  @ApiProblems(401, 403, 404, 409)
  @ApiAcceptedResponse({
    type: DeliveryDto,
    description: 'The new log entry (`redelivery_of` names the original)',
  })
  async redeliver(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
    @Param('id') id: string,
  ): Promise<DeliveryDto> {
    return toDto(await this.redelivery.redeliver(principal, factoryUid, uid, id), []);
  }

  @Post(':id/test-filter')
  @HttpCode(200)
  @RequirePermission('webhooks.read')
  @ApiOperation({
    operationId: 'testWebhookFilter',
    summary: "Would an automation's trigger (or an inline filter) fire for this stored delivery?",
  })
  @ApiProblems(400, 401, 404)
  @ApiOkResponse({ type: TestFilterResponseDto })
  async testFilter(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
    @Param('id') id: string,
    @Body() body: TestFilterDto,
  ): Promise<TestFilterResponseDto> {
    if ((body.automation === undefined) === (body.filter === undefined)) {
      throw ApiError.invalid('automation', 'give either automation (a name) or filter, not both');
    }
    const delivery = await this.delivery(principal, factoryUid, uid, id);
    if (!delivery.payload)
      throw ApiError.invalid(
        'id',
        `delivery ${id} is ${STATUS_LABELS[delivery.status]}: only Accepted deliveries keep a payload to test`,
      );
    const json = JSON.parse(delivery.payload.toString('utf8')) as JsonValue;
    let filters: TriggerFilter[];
    let enabled: boolean | undefined;
    if (body.filter) {
      const problem = validatePayloadFilter(body.filter.payload ?? {})[0];
      if (problem)
        throw ApiError.invalid(['filter.payload', ...problem.path].join('.'), problem.message);
      filters = [body.filter as TriggerFilter];
    } else {
      const automation = await this.automations.findByName(
        delivery.webhookFactoryId,
        body.automation!,
      );
      if (!automation) throw ApiError.notFound(`automation "${body.automation}"`);
      filters = automation.triggers;
      enabled = automation.enabled;
    }
    const triggers = filters.map((f, index) => ({
      index,
      ...checkTrigger(f, delivery.webhookId, json),
    }));
    const wouldTrigger = enabled !== false && triggers.some((t) => t.matched);
    return {
      result: wouldTrigger ? 'Would trigger' : 'Would not trigger',
      would_trigger: wouldTrigger,
      ...(enabled === undefined ? {} : { automation_enabled: enabled }),
      triggers,
    };
  }

  private async delivery(principal: Principal, factoryUid: string, uid: string, id: string) {
    const { webhook } = await this.webhooks.get(principal, factoryUid, uid);
    const delivery = /^\d{1,19}$/.test(id) ? await this.log.get(webhook.id, id) : null;
    if (!delivery) throw ApiError.notFound(`delivery "${id}"`);
    return Object.assign(delivery, { webhookFactoryId: webhook.factoryId });
  }

  private async runsByEntry(deliveries: WebhookDelivery[]) {
    const rows = await this.log.runsFor(
      deliveries.filter((d) => d.status === 'accepted').map((d) => d.id),
    );
    const names = new Map<string, string>();
    const byEntry = new Map<string, DeliveryRunDto[]>();
    for (const row of rows) {
      if (!names.has(row.automationId)) {
        names.set(
          row.automationId,
          (await this.automations.nameOf(row.automationId)) ?? row.automationId,
        );
      }
      const list = byEntry.get(String(row.deliveryEntryId)) ?? [];
      list.push({
        automation: names.get(row.automationId)!,
        run_id: row.runId,
        error: row.error,
        error_code: row.errorCode,
      });
      byEntry.set(String(row.deliveryEntryId), list);
    }
    return byEntry;
  }
}

function toDto(d: WebhookDelivery, runs?: DeliveryDto['runs']): DeliveryDto {
  return {
    id: String(d.id),
    delivery_id: d.deliveryId,
    status: STATUS_LABELS[d.status],
    size_bytes: d.sizeBytes,
    received_at: toRfc3339(d.receivedAt)!,
    ...(d.status === 'accepted'
      ? { evaluated_at: toRfc3339(d.evaluatedAt), runs: runs ?? [] }
      : {}),
    ...(d.redeliveryOf ? { redelivery_of: String(d.redeliveryOf) } : {}),
  };
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^\d{1,19}$/.test(id))
    throw ApiError.invalid('cursor', 'is not a cursor this endpoint returned');
  return id;
}
