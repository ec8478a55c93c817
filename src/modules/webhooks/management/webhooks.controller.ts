import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseFilters } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../../../common/auth/principal.decorator';
import { ApiProblems } from '../../../common/errors/problem.schema';
import type { Principal } from '../../../common/auth/principal';
import { DefinitionRefusedFilter } from './definition-refused.filter';
import {
  CreateWebhookDto,
  ListWebhooksResponseDto,
  WebhookDto,
  WebhookWithSecretDto,
} from './dto/webhook.dto';
import { WebhookManagement } from './webhook-management.service';
import { toWebhookDto } from './webhook.mapper';
import { Idempotent } from '../../idempotency';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';

@ApiTags('webhooks')
@ApiBearerAuth()
@UseFilters(DefinitionRefusedFilter)
@Controller('factory/:factoryUid/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhookManagement) {}

  private get baseUrl(): string {
    return this.webhooks.config.webhooks.baseUrl;
  }

  @Post()
  @RequirePermission('webhooks.write')
  @ApiOperation({
    operationId: 'createWebhook',
    summary: 'Create a custom webhook (its URL and secret are shown once)',
  })
  @ApiProblems(400, 401, 403, 404, 409, 422, 503)
  @ApiCreatedResponse({ type: WebhookWithSecretDto })
  @Idempotent({ shownOnce: true })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Body() body: CreateWebhookDto,
  ): Promise<WebhookWithSecretDto> {
    const { webhook, secret } = await this.webhooks.create(principal, factoryUid, body);
    const token = webhook.authMode === 'url_token' ? (secret ?? undefined) : undefined;
    return { ...toWebhookDto(webhook, this.baseUrl, token), secret };
  }

  @Get()
  @RequirePermission('webhooks.read')
  @ApiOperation({
    operationId: 'listWebhooks',
    summary: "List a factory's webhooks (never their secrets)",
  })
  @ApiProblems(401, 404)
  @ApiOkResponse({ type: ListWebhooksResponseDto })
  async list(@CurrentPrincipal() principal: Principal, @Param('factoryUid') factoryUid: string) {
    const webhooks = await this.webhooks.list(principal, factoryUid);
    return { webhooks: webhooks.map((w) => toWebhookDto(w, this.baseUrl)) };
  }

  @Get(':uid')
  @RequirePermission('webhooks.read')
  @ApiOperation({ operationId: 'getWebhook', summary: 'Get a webhook' })
  @ApiProblems(401, 404)
  @ApiOkResponse({ type: WebhookDto })
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
  ) {
    return toWebhookDto(
      (await this.webhooks.get(principal, factoryUid, uid)).webhook,
      this.baseUrl,
    );
  }

  @Post(':uid/enable')
  @HttpCode(200)
  @RequirePermission('webhooks.write')
  @ApiOperation({
    operationId: 'enableWebhook',
    summary: "Enable a webhook (picks up its team secret's current value)",
  })
  @ApiProblems(400, 401, 403, 404, 422)
  @ApiOkResponse({ type: WebhookDto })
  @Idempotent()
  async enable(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
  ) {
    return toWebhookDto(
      await this.webhooks.setEnabled(principal, factoryUid, uid, true),
      this.baseUrl,
    );
  }

  @Post(':uid/disable')
  @HttpCode(200)
  @RequirePermission('webhooks.write')
  @ApiOperation({
    operationId: 'disableWebhook',
    summary: 'Disable a webhook (senders get 404 at once)',
  })
  @ApiProblems(400, 401, 403, 404, 422)
  @ApiOkResponse({ type: WebhookDto })
  @Idempotent()
  async disable(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
  ) {
    return toWebhookDto(
      await this.webhooks.setEnabled(principal, factoryUid, uid, false),
      this.baseUrl,
    );
  }

  @Post(':uid/rotate-secret')
  @HttpCode(200)
  @RequirePermission('webhooks.write')
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: 'Rotate the secret: the new one is shown once, the old one fails at once',
  })
  @ApiProblems(401, 403, 404, 422, 503)
  @ApiOkResponse({ type: WebhookWithSecretDto })
  @Idempotent({ shownOnce: true })
  async rotate(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
  ): Promise<WebhookWithSecretDto> {
    const { webhook, secret } = await this.webhooks.rotate(principal, factoryUid, uid);
    const token = webhook.authMode === 'url_token' ? (secret ?? undefined) : undefined;
    return { ...toWebhookDto(webhook, this.baseUrl, token), secret };
  }

  @Delete(':uid')
  @HttpCode(204)
  @RequirePermission('webhooks.write')
  @ApiOperation({
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook (senders get 404; automations stay but never fire)',
  })
  @ApiProblems(400, 401, 403, 404, 422)
  @ApiNoContentResponse()
  async remove(
    @CurrentPrincipal() principal: Principal,
    @Param('factoryUid') factoryUid: string,
    @Param('uid') uid: string,
  ) {
    await this.webhooks.remove(principal, factoryUid, uid);
  }
}
