import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiError } from '../../common/errors/api-error';
import { ApiProblems } from '../../common/errors/problem.schema';
import { AuditLog } from '../audit';
import type { Principal } from '../../common/auth/principal';
import { CreateAgentDto, UpdateAgentDto } from './dto/agent-request.dto';
import { AgentResponseDto, ListAgentIdentitiesResponseDto } from './dto/agent-response.dto';
import { IdentitiesService } from './identities.service';
import { Idempotent } from '../idempotency';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

/** Agent identities are managed by people only: an agent's own key gets 403. */
export function assertHuman(principal: Principal): void {
  if (principal.userType !== 'user') {
    throw new ApiError(
      'not_authorized',
      'only human users can manage agents; this API key belongs to an agent identity',
    );
  }
}

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent/identities')
export class IdentitiesController {
  constructor(
    private readonly identities: IdentitiesService,
    private readonly audit: AuditLog,
  ) {}

  @Post()
  @HttpCode(201)
  @RequirePermission('agents.write')
  @ApiOperation({ operationId: 'createAgent', summary: "Create an agent for the caller's team" })
  @ApiProblems(400, 401, 403)
  @ApiCreatedResponse({ type: AgentResponseDto })
  @Idempotent()
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateAgentDto,
  ): Promise<AgentResponseDto> {
    return this.audit.deniedOn(principal, 'agent.create', null, () => {
      assertHuman(principal);
      return this.identities.create(principal, body);
    });
  }

  @Get()
  @RequirePermission('agents.read')
  @ApiOperation({
    // Oz's document names this and GET /agent (skills) both listAgents; ids are unique here.
    operationId: 'listAgentIdentities',
    summary: "List the team's agents, oldest first",
  })
  @ApiProblems(400, 401, 403)
  @ApiQuery({ name: 'factory_uid', required: false, type: String })
  @ApiOkResponse({ type: ListAgentIdentitiesResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query('factory_uid') factoryUid: unknown,
  ): Promise<ListAgentIdentitiesResponseDto> {
    assertHuman(principal);
    if (factoryUid !== undefined && typeof factoryUid !== 'string') {
      throw ApiError.invalid('factory_uid', 'must be a single string');
    }
    return { agents: await this.identities.list(principal.teamId, factoryUid || undefined) };
  }

  @Get(':uid')
  @RequirePermission('agents.read')
  @ApiOperation({ operationId: 'getAgent', summary: 'Get an agent' })
  @ApiProblems(401, 403, 404)
  @ApiParam({ name: 'uid' })
  @ApiOkResponse({ type: AgentResponseDto })
  get(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
  ): Promise<AgentResponseDto> {
    assertHuman(principal);
    return this.identities.get(principal.teamId, uid);
  }

  @Put(':uid')
  @RequirePermission('agents.write')
  @ApiOperation({
    operationId: 'updateAgent',
    summary: 'Update an agent (omitted or null = unchanged, empty = clear)',
  })
  @ApiProblems(400, 401, 403, 404)
  @ApiParam({ name: 'uid' })
  @ApiOkResponse({ type: AgentResponseDto })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Body() body: UpdateAgentDto,
  ): Promise<AgentResponseDto> {
    return this.audit.deniedOn(principal, 'agent.update', { type: 'agent', id: uid }, () => {
      assertHuman(principal);
      return this.identities.update(principal, uid, body);
    });
  }

  @Delete(':uid')
  @HttpCode(204)
  @RequirePermission('agents.write')
  @ApiOperation({
    operationId: 'deleteAgent',
    summary: 'Delete an agent; all its API keys are deleted atomically',
  })
  @ApiProblems(401, 403, 404)
  @ApiParam({ name: 'uid' })
  @ApiNoContentResponse({ description: 'Agent deleted' })
  async delete(@CurrentPrincipal() principal: Principal, @Param('uid') uid: string): Promise<void> {
    await this.audit.deniedOn(principal, 'agent.delete', { type: 'agent', id: uid }, () => {
      assertHuman(principal);
      return this.identities.delete(principal, uid);
    });
  }
}
