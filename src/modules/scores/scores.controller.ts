import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import type { Principal } from '../../common/auth/principal';
import { RunScoped } from '../teams';
import {
  DispatchJudgeDto,
  DispatchJudgeResponseDto,
  ReportScoresDto,
  ReportScoresResponseDto,
  RunScoresResponseDto,
} from './scores.dto';
import { ScoresService } from './scores.service';
import { Idempotent } from '../idempotency';
import { RequirePermission } from '../../common/auth/require-permission.decorator';

@ApiTags('agent')
@ApiBearerAuth()
@Controller('agent/runs/:runId')
export class ScoresController {
  constructor(private readonly scores: ScoresService) {}

  @Post('judges')
  @HttpCode(200)
  @RequirePermission('runs.create')
  @ApiOperation({ operationId: 'dispatchJudge', summary: 'Start a judge run that scores this run' })
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: DispatchJudgeResponseDto })
  @ApiProblems(400, 401, 404, 409)
  @Idempotent()
  async dispatch(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
    @Body() body: DispatchJudgeDto,
  ): Promise<DispatchJudgeResponseDto> {
    const judge = await this.scores.dispatchJudge(principal, runId, body);
    return { run_id: judge.id, target_run_id: runId, state: judge.state };
  }

  @Post('scores')
  @RunScoped()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'reportScores',
    summary: "Report a judge's verdicts (the judge run's run-scoped key only)",
  })
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: ReportScoresResponseDto })
  @ApiProblems(400, 401, 403)
  @Idempotent()
  async report(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
    @Body() body: ReportScoresDto,
  ): Promise<ReportScoresResponseDto> {
    const results = await this.scores.report(principal, runId, body.verdicts);
    const accepted = results.filter((r) => r.accepted).length;
    return {
      run_id: runId,
      accepted_count: accepted,
      rejected_count: results.length - accepted,
      results,
    };
  }

  @Get('scores')
  @RequirePermission('runs.read')
  @ApiOperation({ operationId: 'listRunScores', summary: "A run's scores, most recent first" })
  @ApiParam({ name: 'runId' })
  @ApiOkResponse({ type: RunScoresResponseDto })
  @ApiProblems(401, 404)
  async list(
    @CurrentPrincipal() principal: Principal,
    @Param('runId') runId: string,
  ): Promise<RunScoresResponseDto> {
    const scores = await this.scores.list(principal.teamId, runId);
    return {
      run_id: runId,
      scores: scores.map((s) => ({
        criterion: s.criterion,
        score: s.score,
        classification: s.classification,
        reason: s.reason,
        judge_run_id: s.judgeRunId,
        created_at: s.createdAt.toISOString(),
      })),
    };
  }
}
