import { Body, Controller, Get, Param, Put } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import type { Principal } from '../../common/auth/principal';
import { RequirePermission } from '../../common/auth/require-permission.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { LimitsDto, UpdateLimitsDto } from './limits.dto';
import { LimitsService } from './limits.service';

/** Ambient extension: concurrency, budget and per-run cost limits of a team and its agents. */
@ApiTags('limits')
@ApiBearerAuth()
@Controller()
export class LimitsController {
  constructor(private readonly limits: LimitsService) {}

  @Get('limits')
  @RequirePermission('limits.read')
  @ApiOperation({ operationId: 'getLimits', summary: "The team's limits (null = no limit)" })
  @ApiProblems(401, 403)
  @ApiOkResponse({ type: LimitsDto })
  get(@CurrentPrincipal() principal: Principal): Promise<LimitsDto> {
    return this.limits.teamLimits(principal.teamId);
  }

  @Put('limits')
  @RequirePermission('limits.write')
  @ApiOperation({
    operationId: 'updateLimits',
    summary: "Set the team's limits (omitted = unchanged, null = no limit)",
  })
  @ApiProblems(400, 401, 403)
  @ApiOkResponse({ type: LimitsDto })
  update(
    @CurrentPrincipal() principal: Principal,
    @Body() body: UpdateLimitsDto,
  ): Promise<LimitsDto> {
    return this.limits.update(principal, null, body);
  }

  // Part of the identity's API: people only, like every /agent/identities route.
  @Get('agent/identities/:uid/limits')
  @RequirePermission('agents.read')
  @ApiOperation({ operationId: 'getAgentLimits', summary: "An agent identity's own limits" })
  @ApiProblems(401, 403, 404)
  @ApiParam({ name: 'uid' })
  @ApiOkResponse({ type: LimitsDto })
  getForAgent(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
  ): Promise<LimitsDto> {
    return this.limits.agentLimits(principal.teamId, uid);
  }

  @Put('agent/identities/:uid/limits')
  @RequirePermission('agents.write')
  @ApiOperation({
    operationId: 'updateAgentLimits',
    summary: "Set an agent identity's limits, on top of the team's (omitted = unchanged)",
  })
  @ApiProblems(400, 401, 403, 404)
  @ApiParam({ name: 'uid' })
  @ApiOkResponse({ type: LimitsDto })
  updateForAgent(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Body() body: UpdateLimitsDto,
  ): Promise<LimitsDto> {
    return this.limits.update(principal, uid, body);
  }
}
