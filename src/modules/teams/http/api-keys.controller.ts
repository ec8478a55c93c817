import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
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
import { ApiError } from '../../../common/errors/api-error';
import { ApiProblems } from '../../../common/errors/problem.schema';
import { parseRfc3339 } from '../../../common/time';
import { AuditLog } from '../../audit';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';
import { ApiKeysService } from '../api-keys.service';
import type { Principal } from '../../../common/auth/principal';
import {
  CreateApiKeyDto,
  CreatedApiKeyDto,
  ListApiKeysResponseDto,
  toApiKeyDto,
} from './api-key.dto';

/**
 * The team's API keys of people, managed over HTTP (admins only). A revoked key is refused on the
 * next request on every replica (its cached entry is dropped everywhere before the revocation is
 * answered); the run streams it opened end as soon as their replica hears of it
 * (KeyRevocationWatch), within KEY_RECHECK_INTERVAL_MS otherwise.
 */
@ApiTags('api-keys')
@ApiBearerAuth()
@Controller('api-keys')
export class ApiKeysController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('api_keys.write')
  @ApiOperation({ operationId: 'createApiKey', summary: 'Create a team API key (shown once)' })
  @ApiProblems(400, 401, 403)
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateApiKeyDto,
  ): Promise<CreatedApiKeyDto> {
    const expiresAt = expiryOf(body.expires_at);
    const { id, key } = await this.dataSource.transaction(async (manager) => {
      const made = await this.apiKeys.create(
        { id: principal.userId, teamId: principal.teamId },
        body.name,
        { role: body.role, expiresAt, manager },
      );
      await this.audit.record(manager, principal, 'api_key.create', keyTarget(made.id), {
        name: body.name,
        role: body.role ?? null,
        expires_at: expiresAt?.toISOString() ?? null,
      });
      return made;
    });
    const created = await this.apiKeys.findPeopleKey(principal.teamId, id);
    if (!created) throw ApiError.notFound(`API key "${id}"`); // its user was deleted meanwhile
    return { ...toApiKeyDto(created), key };
  }

  @Get()
  @RequirePermission('api_keys.read')
  @ApiOperation({
    operationId: 'listApiKeys',
    summary: "The team's API keys of people, oldest first (never the secret)",
  })
  @ApiProblems(401, 403)
  @ApiOkResponse({ type: ListApiKeysResponseDto })
  async list(@CurrentPrincipal() principal: Principal): Promise<ListApiKeysResponseDto> {
    return { api_keys: (await this.apiKeys.listPeopleKeys(principal.teamId)).map(toApiKeyDto) };
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('api_keys.write')
  @ApiOperation({ operationId: 'revokeApiKey', summary: 'Revoke a team API key' })
  @ApiProblems(401, 403, 404)
  @ApiParam({ name: 'id' })
  @ApiNoContentResponse({ description: 'Key revoked (revoking twice is harmless)' })
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const key = await this.apiKeys.revokePeopleKey(principal.teamId, id, manager);
      if (!key) throw ApiError.notFound(`API key "${id}"`);
      await this.audit.record(manager, principal, 'api_key.revoke', keyTarget(id), {
        name: key.name,
      });
    });
  }
}

function expiryOf(text: string | undefined): Date | null {
  if (text === undefined) return null;
  const date = parseRfc3339(text);
  if (!date) throw ApiError.invalid('expires_at', 'must be an RFC 3339 date-time');
  if (date.getTime() <= Date.now()) throw ApiError.invalid('expires_at', 'must be in the future');
  return date;
}

function keyTarget(id: string) {
  return { type: 'api_key', id };
}
