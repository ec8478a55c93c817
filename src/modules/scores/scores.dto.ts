import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
} from 'class-validator';

@ApiSchema({ name: 'DispatchJudgeRequest' })
export class DispatchJudgeDto {
  @ApiProperty({ description: 'The rubric: what to judge and how' })
  @IsString()
  @MinLength(1)
  @MaxLength(100_000)
  prompt: string;

  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(255) title?: string;
}

@ApiSchema({ name: 'DispatchJudgeResponse' })
export class DispatchJudgeResponseDto {
  @ApiProperty({ description: 'The judge run' }) run_id: string;
  @ApiProperty({ description: 'The run it judges' }) target_run_id: string;
  @ApiProperty() state: string;
}

@ApiSchema({ name: 'ScoreVerdict' })
export class VerdictDto {
  @ApiProperty({ maxLength: 100 }) criterion: string;
  @ApiPropertyOptional({ minimum: 0, maximum: 1 }) score?: number;
  @ApiPropertyOptional({ maxLength: 100 }) classification?: string;
  @ApiPropertyOptional({ maxLength: 10000 }) reason?: string;
}

/** Verdicts are checked one by one (`checkVerdict`), so only the list itself is validated here. */
@ApiSchema({ name: 'ReportScoresRequest' })
export class ReportScoresDto {
  @ApiProperty({ type: [VerdictDto], minItems: 1, maxItems: 100 })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(100)
  verdicts: unknown[];
}

@ApiSchema({ name: 'VerdictResult' })
export class VerdictResultDto {
  @ApiProperty({ description: 'Position in the request' }) index: number;
  @ApiProperty() accepted: boolean;
  @ApiPropertyOptional() criterion?: string;
  @ApiPropertyOptional({ description: 'Why the verdict was refused (names the field)' })
  error?: string;
}

@ApiSchema({ name: 'ReportScoresResponse' })
export class ReportScoresResponseDto {
  @ApiProperty() run_id: string;
  @ApiProperty() accepted_count: number;
  @ApiProperty() rejected_count: number;
  @ApiProperty({ type: [VerdictResultDto] }) results: VerdictResultDto[];
}

@ApiSchema({ name: 'RunScore' })
export class RunScoreDto {
  @ApiProperty() criterion: string;
  @ApiPropertyOptional({ nullable: true, type: Number }) score: number | null;
  @ApiPropertyOptional({ nullable: true, type: String }) classification: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) reason: string | null;
  @ApiProperty() judge_run_id: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

@ApiSchema({ name: 'RunScoresResponse' })
export class RunScoresResponseDto {
  @ApiProperty() run_id: string;
  @ApiProperty({ type: [RunScoreDto] }) scores: RunScoreDto[];
}
