import { HarnessTypes } from '../../run-config';
import { SignatureVerifierRegistry } from '../verifiers/signature-verifier-registry';
import { definitionVocabulary } from './definition/definition-vocabulary';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  Query,
  Res,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { CurrentPrincipal } from '../../../common/auth/principal.decorator';
import { Public } from '../../../common/auth/public.decorator';
import { ApiError } from '../../../common/errors/api-error';
import { ApiProblems } from '../../../common/errors/problem.schema';
import { toRfc3339 } from '../../../common/time';
import type { Principal } from '../../../common/auth/principal';
import { AutomationStore } from './automation-store.repository';
import { ApplyResult } from './definition-applier.service';
import { sendInvalidDefinition } from './definition-response';
import { parseDefinition } from './definition/definition-parser';
import { SCHEMA_VERSION } from './definition/factory-file';
import {
  AppliedFactoryDto,
  CreateFactoryDto,
  DefinitionResponseDto,
  FactoryDefinitionDto,
  FactoryDto,
  ListFactoriesResponseDto,
  UpdateFactoryDto,
  ValidateFilesResponseDto,
} from './dto/factory.dto';
import { FactoriesService } from './factories.service';
import { toFactoryDto } from './factory.mapper';
import { decodeFactoryCursor, encodeFactoryCursor } from './factory-cursor';
import { RepositorySync } from './repository/repository-sync.service';
import { Idempotent } from '../../idempotency';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';

@ApiTags('factories')
@ApiBearerAuth()
@Controller()
export class FactoriesController {
  constructor(
    private readonly factories: FactoriesService,
    private readonly sync: RepositorySync,
    private readonly automationStore: AutomationStore,
    private readonly harnessTypes: HarnessTypes,
    private readonly verifiers: SignatureVerifierRegistry,
  ) {}

  @Post('factory')
  @RequirePermission('factories.write')
  @ApiOperation({
    operationId: 'createFactory',
    summary: 'Create a managed or repository-backed factory',
  })
  @ApiProblems(400, 401, 503)
  @ApiCreatedResponse({ type: AppliedFactoryDto })
  @Idempotent()
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateFactoryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return this.answer(res, await this.factories.create(principal, body), 201);
  }

  @Get('factory')
  @RequirePermission('factories.read')
  @ApiOperation({ operationId: 'listFactories', summary: "List the team's factories" })
  @ApiQuery({ name: 'cursor', required: false })
  @ApiQuery({
    name: 'limit',
    required: false,
    description: '1-100, default 50',
    schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 },
  })
  @ApiQuery({ name: 'search', required: false, description: 'substring of the name' })
  @ApiProblems(400, 401)
  @ApiOkResponse({ type: ListFactoriesResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query('cursor') cursor?: string,
    @Query('limit') limitText?: string,
    @Query('search') search?: string,
  ): Promise<ListFactoriesResponseDto> {
    const limit = limitText === undefined ? 50 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw ApiError.invalid('limit', 'must be between 1 and 100');
    const after = cursor ? decodeFactoryCursor(cursor) : undefined;
    const { factories, more } = await this.factories.list(
      principal.teamId,
      limit,
      after,
      search?.trim() || undefined,
    );
    const last = factories.at(-1);
    return {
      factories: factories.map(toFactoryDto),
      page_info:
        more && last
          ? { has_next_page: true, next_cursor: encodeFactoryCursor(last) }
          : { has_next_page: false, next_cursor: '' },
    };
  }

  @Get('factory/:uid')
  @RequirePermission('factories.read')
  @ApiOperation({ operationId: 'getFactory', summary: 'Get a factory' })
  @ApiProblems(401, 404)
  @ApiOkResponse({ type: FactoryDto })
  async get(@CurrentPrincipal() principal: Principal, @Param('uid') uid: string) {
    return toFactoryDto(await this.factories.get(principal.teamId, uid));
  }

  @Patch('factory/:uid')
  @RequirePermission('factories.write')
  @ApiOperation({
    operationId: 'updateFactory',
    summary:
      "Ambient: change a factory's settings (a repository-backed factory's credentials; used from the next sync)",
  })
  @ApiProblems(400, 401, 403, 404)
  @ApiOkResponse({ type: FactoryDto })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Body() body: UpdateFactoryDto,
  ) {
    return toFactoryDto(await this.factories.update(principal, uid, body));
  }

  @Delete('factory/:uid')
  @HttpCode(204)
  @RequirePermission('factories.write')
  @ApiOperation({
    operationId: 'deleteFactory',
    summary: 'Delete a factory (its webhooks answer 404)',
  })
  @ApiProblems(401, 403, 404)
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('uid') uid: string) {
    await this.factories.remove(principal, uid);
  }

  @Get('factory/:uid/definition')
  @RequirePermission('factories.read')
  @ApiOperation({
    operationId: 'getFactoryDefinition',
    summary: 'The files of the applied definition',
  })
  @ApiProblems(401, 404)
  @ApiOkResponse({ type: DefinitionResponseDto })
  async definition(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
  ): Promise<DefinitionResponseDto> {
    const factory = await this.factories.get(principal.teamId, uid);
    const files = await this.factories.files(factory.id);
    return {
      files: files.map((f) => ({ path: f.path, content: f.content })),
      applied_commit: factory.appliedCommit,
      applied_at: toRfc3339(factory.appliedAt),
    };
  }

  @Put('factory/:uid/definition')
  @RequirePermission('factories.write')
  @ApiOperation({
    operationId: 'putFactoryDefinition',
    summary: "Replace a managed factory's definition (all files, applied atomically)",
  })
  @ApiProblems(401, 403, 404, 422)
  @ApiBadRequestResponse({
    description: 'Invalid definition: the Error model plus `diagnostics[]`; nothing changed',
  })
  @ApiOkResponse({ type: AppliedFactoryDto })
  async putDefinition(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Body() body: FactoryDefinitionDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return this.answer(res, await this.factories.putDefinition(principal, uid, body.files), 200);
  }

  @Get('factory/:uid/automations')
  @RequirePermission('factories.read')
  @ApiOperation({
    operationId: 'listFactoryAutomations',
    summary: "A factory's automations as applied",
  })
  @ApiProblems(401, 404)
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['automations'],
      properties: {
        automations: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'enabled', 'triggers', 'updated_at'],
            properties: {
              name: { type: 'string' },
              enabled: { type: 'boolean' },
              agent: { type: 'string', nullable: true },
              triggers: { type: 'array', items: { type: 'object', additionalProperties: true } },
              execution: { type: 'object', additionalProperties: true, nullable: true },
              prompt: { type: 'string' },
              updated_at: { type: 'string', format: 'date-time' },
            },
          },
        },
      },
    },
  })
  async automationList(@CurrentPrincipal() principal: Principal, @Param('uid') uid: string) {
    const factory = await this.factories.get(principal.teamId, uid);
    const automations = await this.automationStore.list(factory.id);
    return {
      automations: automations.map((a) => ({
        name: a.name,
        enabled: a.enabled,
        agent: a.agent,
        triggers: a.triggers,
        execution: a.execution,
        prompt: a.prompt,
        updated_at: toRfc3339(a.updatedAt),
      })),
    };
  }

  @Post('factory/:uid/sync')
  @HttpCode(200)
  @RequirePermission('factories.write')
  @ApiOperation({
    operationId: 'syncFactory',
    summary: 'Apply the production branch of a repository-backed factory now',
  })
  @ApiProblems(401, 403, 404, 409, 422)
  @ApiOkResponse({ type: FactoryDto })
  @Idempotent()
  async syncNow(@CurrentPrincipal() principal: Principal, @Param('uid') uid: string) {
    const factory = await this.factories.get(principal.teamId, uid);
    if (factory.source !== 'repository')
      throw new ApiError('operation_not_supported', 'only repository-backed factories sync');
    const outcome = await this.sync.sync(factory, true, principal);
    if (!outcome)
      throw new ApiError('conflict', 'a sync of this factory is already running', {
        headers: { 'Retry-After': '5' },
      });
    return toFactoryDto(await this.factories.get(principal.teamId, uid));
  }

  @Public()
  @Post('factory-files/validate')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'validateFactoryFiles',
    summary: 'Validate factory files without applying them (no stored state is consulted)',
  })
  @ApiProblems(400)
  @ApiOkResponse({ type: ValidateFilesResponseDto })
  validate(@Body() body: FactoryDefinitionDto): ValidateFilesResponseDto {
    const { diagnostics } = parseDefinition(body.files, {
      strictPaths: false,
      vocabulary: definitionVocabulary(this.harnessTypes, this.verifiers),
    });
    return {
      valid: diagnostics.length === 0,
      schema_version: SCHEMA_VERSION,
      diagnostics,
      deferred_resolutions: [],
      state_dependent_checks_not_run: [
        'secret_exists',
        'webhook_uid_exists',
        'model_exists',
        'webhook_rename',
      ],
      validation_scope: {
        parser: 'checked',
        state_independent: 'checked',
        state_dependent: 'not_checked',
      },
    };
  }

  private answer(res: Response, result: ApplyResult, status: number) {
    if (!result.applied) return sendInvalidDefinition(res, result.diagnostics);
    res.status(status);
    return { ...toFactoryDto(result.factory), warnings: result.warnings };
  }
}
