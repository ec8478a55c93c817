import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CurrentPrincipal } from '../../../common/auth/principal.decorator';
import type { Principal } from '../../../common/auth/principal';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';
import { ApiError } from '../../../common/errors/api-error';
import { ApiProblems } from '../../../common/errors/problem.schema';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { AuditLog } from '../../audit';
import { Idempotent } from '../../idempotency';
import {
  CreatedScimTokenDto,
  CreateScimTokenDto,
  ListScimTokensResponseDto,
  toScimTokenDto,
} from './scim-token.dto';
import { SCIM_PATH } from './scim-users.controller';
import { ScimTokensService } from './scim-tokens.service';

/**
 * The bearer tokens of the team's SCIM client (admins only): the identity provider deactivates
 * people through `/scim/v2/Users` with one (see docs/teams-and-access.md "SCIM deprovisioning").
 */
@ApiTags('scim-tokens')
@ApiBearerAuth()
@Controller('scim-tokens')
export class ScimTokensController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: ScimTokensService,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('api_keys.write')
  @ApiOperation({
    operationId: 'createScimToken',
    summary: "Create a bearer token for the team's SCIM client (shown once)",
  })
  @ApiProblems(400, 401, 403)
  @ApiCreatedResponse({ type: CreatedScimTokenDto })
  @Idempotent({ shownOnce: true })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateScimTokenDto,
  ): Promise<CreatedScimTokenDto> {
    const { token, row } = await this.dataSource.transaction(async (manager) => {
      const made = await this.tokens.create(manager, {
        teamId: principal.teamId,
        name: body.name.trim(),
        createdBy: principal.userId,
      });
      await this.audit.record(
        manager,
        principal,
        'scim_token.create',
        { type: 'scim_token', id: made.row.id },
        { name: made.row.name },
      );
      return made;
    });
    const base = `${this.config.server.publicUrl.replace(/\/+$/, '')}/api/v1/${SCIM_PATH}`;
    return { ...toScimTokenDto(row), token, scim_base_url: base };
  }

  @Get()
  @RequirePermission('api_keys.read')
  @ApiOperation({
    operationId: 'listScimTokens',
    summary: "The team's SCIM tokens, oldest first (never the secret)",
  })
  @ApiProblems(401, 403)
  @ApiOkResponse({ type: ListScimTokensResponseDto })
  async list(@CurrentPrincipal() principal: Principal): Promise<ListScimTokensResponseDto> {
    return { scim_tokens: (await this.tokens.list(principal.teamId)).map(toScimTokenDto) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('api_keys.write')
  @ApiOperation({ operationId: 'revokeScimToken', summary: 'Revoke a SCIM token' })
  @ApiProblems(401, 403, 404)
  @ApiParam({ name: 'id' })
  @ApiNoContentResponse({ description: 'Token revoked (revoking twice is harmless)' })
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const token = await this.tokens.revoke(manager, principal.teamId, id);
      if (!token) throw ApiError.notFound(`SCIM token "${id}"`);
      await this.audit.record(
        manager,
        principal,
        'scim_token.revoke',
        { type: 'scim_token', id },
        { name: token.name },
      );
    });
  }
}
