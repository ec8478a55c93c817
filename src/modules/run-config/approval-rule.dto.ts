import { ApiPropertyOptions, ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { AMBIENT_EXTENSION } from '../../common/openapi-extension';
import { APPROVAL_EFFECTS, MAX_APPROVAL_RULES } from './approval-rules';

/**
 * One approval rule (documentation only: `parseApprovalRules` checks it). Exactly one of
 * `command`, `mcp_tool`, `write_outside` and `egress` says what it matches.
 */
@ApiSchema({
  name: 'ApprovalRule',
  description:
    "Ambient extension: which tool calls need a person's yes (`ask`) or are refused (`deny`). " +
    'Exactly one of command, mcp_tool, write_outside, egress',
})
export class ApprovalRuleDto {
  @ApiPropertyOptional({
    description: 'A regular expression over the command line of a command the agent runs',
    example: '^git push',
  })
  command?: string;

  @ApiPropertyOptional({
    description: 'An MCP tool by name (any server) or `server/tool`',
    example: 'github/create_pr',
  })
  mcp_tool?: string;

  @ApiPropertyOptional({
    type: [String],
    description: 'Matches file writes to a path under none of these absolute sandbox paths',
    example: ['/workspace/app'],
  })
  write_outside?: string[];

  @ApiPropertyOptional({
    enum: ['unlisted'],
    description: "Egress to a host outside the environment's allowlist",
  })
  egress?: 'unlisted';

  @ApiProperty({ enum: APPROVAL_EFFECTS }) effect: 'ask' | 'deny';
}

/** The `approvals` property of environments, agent identities and run configs. */
export function approvalsProperty(description: string, nullable = false): ApiPropertyOptions {
  return {
    ...AMBIENT_EXTENSION,
    type: [ApprovalRuleDto],
    maxItems: MAX_APPROVAL_RULES,
    ...(nullable ? { nullable: true } : {}),
    example: [
      { command: '^git push', effect: 'ask' },
      { mcp_tool: 'deploy', effect: 'deny' },
    ],
    description:
      `Ambient extension: ${description} Rules only add up (environment, agent identity, run): ` +
      'a `deny` wins over an `ask`, and a call no rule matches is allowed. An invalid rule is ' +
      'refused with its field named (`approvals.1.command: …`)',
  };
}
