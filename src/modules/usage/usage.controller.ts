import { Controller, Get, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { CurrentPrincipal } from '../../common/auth/principal.decorator';
import type { Principal } from '../../common/auth/principal';
import { RequirePermission } from '../../common/auth/require-permission.decorator';
import { ApiProblems } from '../../common/errors/problem.schema';
import { RunRecords, USAGE_GROUP_BY } from '../runs';
import { UsageResponseDto } from './usage.dto';
import { MAX_USAGE_RANGE_DAYS, parseUsageParams } from './usage.params';

@ApiTags('usage')
@ApiBearerAuth()
@Controller('usage')
export class UsageController {
  constructor(private readonly records: RunRecords) {}

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
