import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { EnvironmentLatestRuns } from './environment-latest-runs';
import type { Principal } from '../../common/auth/principal';
import { TeamsService } from '../teams';
import type { User } from '../teams';
import {
  AllowEgressDto,
  AllowEgressResponseDto,
  CreateEnvironmentDto,
  EnvironmentDto,
  GrantEnvironmentDto,
  ListEnvironmentsQueryDto,
  ListEnvironmentsResponseDto,
  ShareLinkDto,
  UpdateEnvironmentDto,
} from './dto/environment.dto';
import { toEnvironmentDtos } from './environment.mapper';
import { EnvironmentsService, VisibleEnvironment } from './environments.service';
import { Idempotent } from '../idempotency';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent/environments')
export class EnvironmentsController {
  constructor(
    private readonly environments: EnvironmentsService,
    private readonly teams: TeamsService,
    private readonly runs: EnvironmentLatestRuns,
  ) {}

  @Get()
  @RequirePermission('environments.read')
  @ApiOperation({ operationId: 'listEnvironments', summary: 'List environments' })
  @ApiProblems(400, 401)
  @ApiOkResponse({ type: ListEnvironmentsResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: ListEnvironmentsQueryDto,
  ): Promise<ListEnvironmentsResponseDto> {
    const visible = await this.environments.listVisible(
      principal.teamId,
      query.sort_by ?? 'last_updated',
    );
    return { environments: await this.toDtos(principal, visible) };
  }

  @Post()
  @RequirePermission('environments.write')
  @ApiOperation({ operationId: 'createEnvironment', summary: 'Create an environment' })
  @ApiProblems(400, 401)
  @ApiCreatedResponse({ type: EnvironmentDto })
  @Idempotent()
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateEnvironmentDto) {
    const environment = await this.environments.create(principal, body);
    return this.one(principal, { environment, scope: 'owner' });
  }

  @Post('shared/:token/accept')
  @HttpCode(200)
  @RequirePermission('environments.write')
  @ApiOperation({
    operationId: 'acceptEnvironmentShareLink',
    summary: "Add a shared environment to the caller's team",
  })
  @ApiProblems(401, 404)
  @ApiOkResponse({ type: EnvironmentDto })
  @Idempotent()
  async accept(@CurrentPrincipal() principal: Principal, @Param('token') token: string) {
    const environment = await this.environments.acceptShareLink(principal, token);
    const scope = environment.teamId === principal.teamId ? 'owner' : 'guest';
    return this.one(principal, { environment, scope });
  }

  @Get(':uid')
  @RequirePermission('environments.read')
  @ApiOperation({ operationId: 'getEnvironment', summary: 'Get one environment' })
  @ApiProblems(401, 404)
  @ApiOkResponse({ type: EnvironmentDto })
  async get(@CurrentPrincipal() principal: Principal, @Param('uid') uid: string) {
    return this.one(principal, await this.environments.findVisible(principal.teamId, uid));
  }

  @Patch(':uid')
  @RequirePermission('environments.write')
  @ApiOperation({ operationId: 'updateEnvironment', summary: 'Change an environment' })
  @ApiProblems(400, 401, 403, 404)
  @ApiOkResponse({ type: EnvironmentDto })
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Body() body: UpdateEnvironmentDto,
  ) {
    const environment = await this.environments.update(principal, uid, body);
    return this.one(principal, { environment, scope: 'owner' });
  }

  @Delete(':uid')
  @HttpCode(204)
  @RequirePermission('environments.write')
  @ApiOperation({ operationId: 'deleteEnvironment', summary: 'Delete an environment' })
  @ApiProblems(401, 403, 404)
  @ApiNoContentResponse()
  async remove(@CurrentPrincipal() principal: Principal, @Param('uid') uid: string) {
    await this.environments.remove(principal, uid);
  }

  @Post(':uid/grants')
  @HttpCode(204)
  @RequirePermission('environments.write')
  @ApiOperation({ operationId: 'grantEnvironment', summary: 'Give another team guest access' })
  @ApiProblems(400, 401, 403, 404)
  @ApiNoContentResponse()
  @Idempotent()
  async grant(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Body() body: GrantEnvironmentDto,
  ) {
    await this.environments.grant(principal, uid, body.team_id);
  }

  @Delete(':uid/grants/:teamId')
  @HttpCode(204)
  @RequirePermission('environments.write')
  @ApiOperation({ operationId: 'revokeEnvironmentGrant', summary: "Remove a team's guest access" })
  @ApiProblems(401, 403, 404)
  @ApiNoContentResponse()
  async revoke(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Param('teamId') teamId: string,
  ) {
    await this.environments.revoke(principal, uid, teamId);
  }

  @Post(':uid/egress-allow')
  @HttpCode(200)
  @RequirePermission('network.write')
  @ApiOperation({
    operationId: 'allowEnvironmentEgress',
    summary: "Add a rule to the environment's egress_allow (listed already: unchanged)",
  })
  @ApiProblems(400, 401, 403, 404)
  @ApiOkResponse({ type: AllowEgressResponseDto })
  async allowEgress(
    @CurrentPrincipal() principal: Principal,
    @Param('uid') uid: string,
    @Body() body: AllowEgressDto,
  ): Promise<AllowEgressResponseDto> {
    const { environment, added } = await this.environments.allowEgress(principal, uid, body.rule);
    return { added, environment: await this.one(principal, { environment, scope: 'owner' }) };
  }

  @Post(':uid/share-link')
  @HttpCode(200)
  @RequirePermission('environments.write')
  @ApiOperation({
    operationId: 'createEnvironmentShareLink',
    summary: 'Create a share token (replaces the previous one)',
  })
  @ApiProblems(401, 403, 404)
  @ApiOkResponse({ type: ShareLinkDto })
  @Idempotent()
  async share(@CurrentPrincipal() principal: Principal, @Param('uid') uid: string) {
    return { share_token: await this.environments.shareLink(principal, uid) };
  }

  private async one(principal: Principal, visible: VisibleEnvironment): Promise<EnvironmentDto> {
    return (await this.toDtos(principal, [visible]))[0];
  }

  private async toDtos(
    principal: Principal,
    visible: VisibleEnvironment[],
  ): Promise<EnvironmentDto[]> {
    const idsByTeam = new Map<string, string[]>();
    for (const { environment } of visible) {
      const ids = idsByTeam.get(environment.teamId) ?? [];
      for (const id of [environment.creatorId, environment.lastEditorId]) if (id) ids.push(id);
      idsByTeam.set(environment.teamId, ids);
    }
    const users = new Map<string, User>();
    for (const [teamId, ids] of idsByTeam) {
      for (const [id, user] of await this.teams.usersByIds(teamId, ids)) users.set(id, user);
    }
    const latestRuns = await this.runs.latestByEnvironment(
      principal.teamId,
      visible.map(({ environment }) => environment.id),
    );
    return toEnvironmentDtos(visible, latestRuns, users);
  }
}
