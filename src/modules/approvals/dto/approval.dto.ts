import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageInfoDto } from '../../../common/page-info.dto';
import { ApprovalRuleDto } from '../../run-config';
import type { ApprovalRule } from '../../run-config';

export const APPROVAL_KINDS = ['approval', 'question'] as const;
export const APPROVAL_DECISIONS = ['approve', 'deny', 'answer'] as const;
export type DecisionInput = (typeof APPROVAL_DECISIONS)[number];
/** A comment (a deny's reason, a question's answer) is at most this long. */
export const MAX_COMMENT_LENGTH = 20_000;

@ApiSchema({ name: 'ApprovalDecider', description: 'Who decided a request' })
export class ApprovalDeciderDto {
  @ApiProperty({
    enum: ['user', 'agent', 'api_key', 'system'],
    description: '`system`: Ambient itself (the blocked timeout, a follow-up it sent)',
  })
  type: string;

  @ApiProperty({ nullable: true, type: String, description: 'The user or agent id' })
  id: string | null;

  @ApiProperty() name: string;
}

@ApiSchema({
  name: 'RunApproval',
  description:
    "A run's request for a person: an approval (a tool call an approval rule asks about) or a " +
    'question (the agent asked the user). While one is undecided the run is BLOCKED',
})
export class ApprovalDto {
  @ApiProperty() id: string;
  @ApiProperty() run_id: string;
  @ApiProperty({ enum: APPROVAL_KINDS }) kind: string;

  @ApiProperty({
    description: 'The tool the agent called (`run_command`, an MCP tool, `ask_user`) or `egress`',
  })
  tool: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The call in full: what the agent asked to run (or the question, or the host)',
  })
  arguments: Record<string, unknown>;

  @ApiProperty({
    type: ApprovalRuleDto,
    nullable: true,
    description: 'The rule that asked (null for a question)',
  })
  rule: ApprovalRule | null;

  @ApiProperty({ description: 'The pending action in words' }) summary: string;
  @ApiProperty({ format: 'date-time' }) requested_at: string;

  @ApiProperty({ enum: APPROVAL_DECISIONS, nullable: true, description: 'null while undecided' })
  decision: string | null;

  @ApiProperty({
    nullable: true,
    type: String,
    description: "The decider's comment: why it was denied, or the answer to a question",
  })
  comment: string | null;

  @ApiProperty({ type: ApprovalDeciderDto, nullable: true }) decided_by: ApprovalDeciderDto | null;

  @ApiProperty({ format: 'date-time', nullable: true, type: String }) decided_at: string | null;

  @ApiProperty({
    description:
      'Whether the caller may decide it now: it is undecided, its run is BLOCKED, and the ' +
      "caller is a member or admin (and one of the agent identity's approvers, if it names any)",
  })
  can_decide: boolean;
}

@ApiSchema({ name: 'ListRunApprovalsResponse' })
export class ListRunApprovalsResponseDto {
  @ApiProperty({ type: [ApprovalDto], description: 'Oldest first' }) approvals: ApprovalDto[];
}

@ApiSchema({ name: 'ApprovalInboxItem' })
export class ApprovalInboxItemDto extends ApprovalDto {
  @ApiProperty() run_title: string;
  @ApiProperty({ description: "The run's state (BLOCKED while a request waits)" })
  run_state: string;
}

@ApiSchema({ name: 'ListApprovalInboxResponse' })
export class ListApprovalInboxResponseDto {
  @ApiProperty({ type: [ApprovalInboxItemDto], description: 'Newest first' })
  approvals: ApprovalInboxItemDto[];

  @ApiProperty({ type: PageInfoDto }) page_info: PageInfoDto;
}

@ApiSchema({ name: 'DecideApprovalRequest' })
export class DecideApprovalDto {
  @ApiProperty({
    enum: APPROVAL_DECISIONS,
    description: 'An approval is approved or denied; a question is answered',
  })
  @IsIn(APPROVAL_DECISIONS)
  decision: DecisionInput;

  @ApiPropertyOptional({
    maxLength: MAX_COMMENT_LENGTH,
    description: 'Why (the agent is told a denial and its reason); for `answer`, the answer itself',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_COMMENT_LENGTH)
  comment?: string;
}

@ApiSchema({ name: 'DecideApprovalResponse' })
export class DecideApprovalResponseDto {
  @ApiProperty({ type: ApprovalDto }) approval: ApprovalDto;

  @ApiProperty({
    description:
      "The run's state after the decision: QUEUED once no request of the run is undecided (a " +
      'new execution resumes it), else still BLOCKED',
  })
  run_state: string;
}
