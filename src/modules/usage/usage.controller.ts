import { Controller, Get, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import type { Principal } from '../../common/auth/principal';
import { RequirePermission } from '../../common/auth/require-permission.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { LimitsService } from '../limits';
import { RunCapacity, RunUsageRepository, USAGE_GROUP_BY } from '../runs';
import { UsageAgainstLimitsDto, UsageResponseDto } from './usage.dto';
import { MAX_USAGE_RANGE_DAYS, parseUsageParams, startOfUtcMonth } from './usage.params';

@ApiTags('usage')
@ApiBearerAuth()
@Controller('usage')
export class UsageController {
  constructor(
    private readonly records: RunUsageRepository,
    private readonly capacity: RunCapacity,
    private readonly limits: LimitsService,
  ) {}

  @Get('limits')
  @RequirePermission('usage.read')
  @ApiOperation({
    operationId: 'getUsageAgainstLimits',
    summary: 'What the team spends and runs now, against its budget and concurrency limit',
    description:
      'The figures the limits are enforced with: inference spend this UTC month against ' +
      'monthly_budget_usd, and runs holding or waiting for a slot against max_concurrent_runs.',
  })
  @ApiProblems(401, 403)
  @ApiOkResponse({ type: UsageAgainstLimitsDto })
  async againstLimits(@CurrentPrincipal() principal: Principal): Promise<UsageAgainstLimitsDto> {
    const { teamId } = principal;
    const monthStart = startOfUtcMonth(new Date());
    const [spend, slots, limits] = await Promise.all([
      this.records.inferenceSpendSince(teamId, null, monthStart),
      this.capacity.teamSlots(teamId),
      this.limits.teamLimits(teamId),
    ]);
    return {
      month_start: monthStart.toISOString(),
      spent_this_month_usd: spend.team,
      monthly_budget_usd: limits.monthly_budget_usd,
      running_runs: slots.running,
      waiting_runs: slots.waiting,
      max_concurrent_runs: limits.max_concurrent_runs,
    };
  }

  @Get()
  @RequirePermission('usage.read')
  @ApiOperation({
    operationId: 'getUsage',
    summary: "The team's runs, tokens and cost over a time range, in buckets",
    description:
      "Sums the stored request_usage of the team's runs created in [from, to). Defaults: the " +
      `current UTC calendar month up to now, by day. The range may span at most ${MAX_USAGE_RANGE_DAYS} days.`,
  })
  @ApiProblems(400, 401, 403)
  @ApiQuery({ name: 'from', required: false, type: String, description: 'RFC 3339, inclusive' })
  @ApiQuery({ name: 'to', required: false, type: String, description: 'RFC 3339, exclusive' })
  @ApiQuery({ name: 'group_by', required: false, enum: USAGE_GROUP_BY })
  @ApiOkResponse({ type: UsageResponseDto })
  async usage(
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
  ): Promise<UsageResponseDto> {
    const params = parseUsageParams(req.query as Record<string, unknown>, new Date());
    const buckets = await this.records.usageBuckets(
      principal.teamId,
      params.from,
      params.to,
      params.groupBy,
    );
    return {
      from: params.from.toISOString(),
      to: params.to.toISOString(),
      group_by: params.groupBy,
      buckets: buckets.map((b) => ({
        key: b.key,
        name: b.name,
        runs: b.runs,
        prompt_tokens: b.promptTokens,
        completion_tokens: b.completionTokens,
        cost_usd: b.costUsd,
      })),
    };
  }
}
