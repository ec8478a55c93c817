import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsInt, IsNumber, IsOptional, Max, Min } from 'class-validator';

export const MAX_CONCURRENT_RUNS = 100_000;
export const MAX_USD = 1_000_000_000;

/** A team's (or an agent identity's) limits; null = no limit. */
@ApiSchema({ name: 'Limits' })
export class LimitsDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'Runs that may execute at once; further runs wait QUEUED with at_capacity',
  })
  max_concurrent_runs: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      'Inference spend (USD, model catalogue prices) allowed per calendar month (UTC); a run ' +
      'started once it is spent ends FAILED with budget_exceeded',
  })
  monthly_budget_usd: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    description:
      'Default cost cap of one run (USD); a run reaching it stops at its next model call',
  })
  max_run_cost_usd: number | null;
}

/** PUT body: an omitted field stays as it is, null removes the limit. */
@ApiSchema({ name: 'UpdateLimitsRequest' })
export class UpdateLimitsDto {
  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 0,
    maximum: MAX_CONCURRENT_RUNS,
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_CONCURRENT_RUNS)
  max_concurrent_runs?: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, maximum: MAX_USD })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MAX_USD)
  monthly_budget_usd?: number | null;

  @ApiPropertyOptional({ type: Number, nullable: true, minimum: 0, maximum: MAX_USD })
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(MAX_USD)
  max_run_cost_usd?: number | null;
}
