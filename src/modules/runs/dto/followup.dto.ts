import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { RUN_MODES } from './create-run.dto';
import { ValidateNestedEach } from '../../../common/errors/validation';

@ApiSchema({ name: 'FollowupAttachment' })
export class FollowupAttachmentDto {
  @ApiProperty() @IsString() attachment_id: string;
  @ApiPropertyOptional() @IsOptional() @IsString() file_name?: string;
}

@ApiSchema({ name: 'SubmitFollowupRequest' })
export class SubmitFollowupDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(200_000) message?: string;

  @ApiPropertyOptional({ enum: RUN_MODES })
  @IsOptional()
  @IsIn(RUN_MODES)
  mode?: string;

  @ApiPropertyOptional({ type: [FollowupAttachmentDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(25)
  @ValidateNestedEach()
  @Type(() => FollowupAttachmentDto)
  attachments?: FollowupAttachmentDto[];
}

@ApiSchema({ name: 'SubmitFollowupResponse' })
export class FollowupResponseDto {
  @ApiProperty({ nullable: true, type: String }) followup_id: string | null;
  @ApiProperty({ enum: ['live_session', 'queued_prompt', 'handoff_execution', 'queue_pending'] })
  outcome: string;
}
