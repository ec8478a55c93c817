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
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiError } from '../../common/errors/api-error';
import { ApiProblems } from '../../common/errors/problem.schema';
import { ApiKeysService } from '../teams';
import type { Principal } from '../../common/auth/principal';
import { toIdentityApiKey } from './agent-response.mapper';
import { CreateIdentityApiKeyDto } from './dto/agent-request.dto';
import { CreatedIdentityApiKeyDto, ListIdentityApiKeysResponseDto } from './dto/agent-response.dto';
import { assertHuman } from './identities.controller';
import { AuditLog } from '../audit';
import { IdentitiesService } from './identities.service';
import { Idempotent } from '../idempotency';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

const DEFAULT_KEY_NAME = 'api';

/**
 * API keys of agent identities (an Ambient extension of the Oz API): a run started or a
 * self-hosted worker connected with such a key acts as the agent. The key is shown once.
 */
@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent/identities/:uid/api-keys')
export class IdentityKeysController {
  constructor(
    private readonly identities: IdentitiesService,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('agents.write')
  @ApiOperation({ operationId: 'createAgentApiKey', summary: 'Create an API key for an agent' })
  @ApiProblems(400, 401, 403, 404)
  @ApiParam({ name: 'uid' })
  @ApiCreatedResponse({ type: CreatedIdentityApiKeyDto })
  @Idempotent({ shownOnce: true })
  async create(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Body() body: CreateIdentityApiKeyDto,
  ): Promise<CreatedIdentityApiKeyDto> {
    const name = body.name?.trim() || DEFAULT_KEY_NAME;
    const { key, id } = await this.audit.deniedOn(
      principal,
      'api_key.create',
      { type: 'agent', id: uid },
      () => {
        assertHuman(principal);
        return this.identities.createKey(principal, uid, name);
      },
    );
    const created = (await this.apiKeys.listForUser(uid)).find((k) => k.id === id);
    if (!created) throw ApiError.notFound(`agent "${uid}"`); // deleted meanwhile, with its keys
    return { ...toIdentityApiKey(created), key };
  }

  @Get()
  @RequirePermission('agents.read')
  @ApiOperation({ operationId: 'listAgentApiKeys', summary: "List an agent's API keys" })
  @ApiProblems(401, 403, 404)
  @ApiParam({ name: 'uid' })
  @ApiOkResponse({ type: ListIdentityApiKeysResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
  ): Promise<ListIdentityApiKeysResponseDto> {
    assertHuman(principal);
    await this.identities.mustFind(principal.teamId, uid);
    return { api_keys: (await this.apiKeys.listForUser(uid)).map(toIdentityApiKey) };
  }

  @Delete(':keyId')
  @HttpCode(204)
  @RequirePermission('agents.write')
  @ApiOperation({ operationId: 'revokeAgentApiKey', summary: "Revoke one of an agent's keys" })
  @ApiProblems(401, 403, 404)
  @ApiParam({ name: 'uid' })
  @ApiParam({ name: 'keyId' })
  @ApiNoContentResponse({ description: 'Key revoked (revoking twice is harmless)' })
  async revoke(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Param('keyId') keyId: string,
  ): Promise<void> {
    const revoked = await this.audit.deniedOn(
      principal,
      'api_key.revoke',
      { type: 'api_key', id: keyId },
      () => {
        assertHuman(principal);
        return this.identities.revokeKey(principal, uid, keyId);
      },
    );
    if (!revoked) throw ApiError.notFound(`API key "${keyId}" of agent "${uid}"`);
  }
}
