import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { USAGE_GROUP_BY } from '../runs';

@ApiSchema({ name: 'UsageBucket' })
export class UsageBucketDto {
  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'The day (YYYY-MM-DD, UTC), model id, executing identity uid, source, or creator uid; ' +
      'null for runs without that value (e.g. no creator)',
  })
  key: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: "The user's or agent's display name (identity and creator buckets; else null)",
  })
  name: string | null;
  @ApiProperty({ description: 'Runs created in the range that fall in this bucket' }) runs: number;
  @ApiProperty() prompt_tokens: number;
  @ApiProperty() completion_tokens: number;
  @ApiProperty({
    description: "The runs' request_usage inference cost (catalogue prices) plus compute cost",
  })
  cost_usd: number;
}

@ApiSchema({ name: 'UsageResponse' })
export class UsageResponseDto {
  @ApiProperty({ format: 'date-time', description: 'Inclusive start of the range used' })
  from: string;
  @ApiProperty({ format: 'date-time', description: 'Exclusive end of the range used' })
  to: string;
  @ApiProperty({ enum: USAGE_GROUP_BY }) group_by: string;
  @ApiProperty({
    type: [UsageBucketDto],
    description:
      'Day buckets in day order (days without runs left out); others by cost, highest first',
  })
  buckets: UsageBucketDto[];
}

@ApiSchema({ name: 'UsageAgainstLimits' })
export class UsageAgainstLimitsDto {
  @ApiProperty({
    format: 'date-time',
    description: 'The start of the current UTC calendar month, from which the budget counts',
  })
  month_start: string;
  @ApiProperty({
    description:
      "Inference spend (USD, catalogue prices) of the team's runs created this month, as " +
      'monthly_budget_usd counts it: compute cost is not counted, nor the tokens of executions ' +
      'still under way',
  })
  spent_this_month_usd: number;
  @ApiProperty({ type: Number, nullable: true, description: 'The team limit; null = none' })
  monthly_budget_usd: number | null;
  @ApiProperty({
    description: "Runs holding a slot now: claimed or running on Ambient's own workers",
  })
  running_runs: number;
  @ApiProperty({ description: 'Runs waiting QUEUED for a slot (at_capacity)' })
  waiting_runs: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'The team limit; null = none' })
  max_concurrent_runs: number | null;
}
