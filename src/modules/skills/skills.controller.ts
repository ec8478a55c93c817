import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { SkillLastRuns } from './skill-last-runs';
import type { Principal } from '../../common/auth/principal';
import { ListAgentsResponseDto, ListSkillsQueryDto } from './dto/skills.dto';
import { SkillsService } from './skills.service';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent')
export class SkillsController {
  constructor(
    private readonly skills: SkillsService,
    private readonly runs: SkillLastRuns,
  ) {}

  @Get()
  @RequirePermission('skills.read')
  @ApiOperation({
    operationId: 'listAgents',
    summary: "List skills discovered in the repositories of the caller's environments",
  })
  @ApiProblems(400, 401)
  @ApiOkResponse({ type: ListAgentsResponseDto })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: ListSkillsQueryDto,
  ): Promise<ListAgentsResponseDto> {
    const agents = await this.skills.list(
      principal.teamId,
      {
        repo: query.repo,
        refresh: query.refresh ?? false,
        sortBy: query.sort_by ?? 'name',
        includeMalformed: query.include_malformed_skills ?? false,
      },
      await this.runs.lastRunBySkillSpec(principal.teamId),
    );
    return { agents };
  }
}
