import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { AgentAvailability, IdentitiesService } from '../identities';
import { ModelsService } from '../models';
import { assertMcpServers, McpSecrets } from '../secrets';
import { assertMetadata } from '../runs';
import { checkedApprovals, HarnessTypes } from '../run-config';
import type { AgentConfig } from '../run-config';
import { CronSchedule, CronSyntaxError, parseCronSchedule } from './cron-schedule';

/** A schedule's fields once checked: what gets stored. */
export interface ScheduleSpec {
  name: string;
  cron: CronSchedule;
  prompt: string;
  agentConfig: AgentConfig | null;
  agentUid: string | null;
  metadata: Record<string, string> | null;
  mode: string;
}

/** What a full update keeps when the request leaves it out. */
export type KeptFields = Pick<ScheduleSpec, 'agentConfig' | 'agentUid' | 'metadata' | 'mode'>;

export type ScheduleInput = Partial<{
  name: string;
  cron_schedule: string;
  prompt: string;
  enabled: boolean;
  agent_config: AgentConfig | null;
  agent_uid: string | null;
  metadata: Record<string, string> | null;
  mode: string;
}>;

/**
 * Checks a schedule before it is stored, naming the field at fault, so that most problems are
 * refused now rather than found at the next tick (what can still fail then, such as a model
 * losing its provider key, is reported in `last_spawn_error`).
 */
@Injectable()
export class ScheduleValidator {
  constructor(
    private readonly models: ModelsService,
    private readonly identities: IdentitiesService,
    private readonly availability: AgentAvailability,
    private readonly mcpSecrets: McpSecrets,
    private readonly harnessTypes: HarnessTypes,
  ) {}

  assertPresent(input: ScheduleInput, fields: (keyof ScheduleInput)[]): void {
    const missing = fields.filter((f) => input[f] === undefined || input[f] === null);
    if (missing.length) {
      throw ApiError.invalid(
        missing.join(', '),
        missing.length > 1 ? 'are required' : 'is required',
      );
    }
  }

  /** `input` must hold name and cron_schedule; `base` supplies what an update leaves out. */
  async check(teamId: string, input: ScheduleInput, base?: KeptFields): Promise<ScheduleSpec> {
    const name = (input.name ?? '').trim();
    if (!name) throw ApiError.invalid('name', 'must not be empty');
    let cron: CronSchedule;
    try {
      cron = parseCronSchedule(input.cron_schedule ?? '');
    } catch (err) {
      if (err instanceof CronSyntaxError) throw ApiError.invalid('cron_schedule', err.message);
      throw err;
    }
    const agentConfig =
      input.agent_config === undefined
        ? (base?.agentConfig ?? null)
        : await this.checkedConfig(teamId, input.agent_config, base?.agentConfig);
    const prompt = (input.prompt ?? '').trim();
    const hasSkill = !!agentConfig?.skill_spec || !!agentConfig?.skills?.length;
    if (!prompt && !hasSkill) {
      throw ApiError.invalid(
        'prompt',
        'is required unless agent_config.skill_spec or agent_config.skills is set',
      );
    }
    const metadata = input.metadata === undefined ? (base?.metadata ?? null) : input.metadata;
    if (metadata) assertMetadata(metadata, 'metadata');
    const agentUid = input.agent_uid === undefined ? (base?.agentUid ?? null) : input.agent_uid;
    if (agentUid && agentUid !== base?.agentUid) await this.assertUsableAgent(teamId, agentUid);
    return {
      name,
      cron,
      prompt,
      agentConfig,
      agentUid: agentUid || null,
      metadata: metadata && Object.keys(metadata).length ? metadata : null,
      mode: input.mode ?? base?.mode ?? 'normal',
    };
  }

  /** `before` is the stored config: MCP values sent back masked keep what it holds. */
  private async checkedConfig(
    teamId: string,
    config: AgentConfig | null,
    before?: AgentConfig | null,
  ): Promise<AgentConfig | null> {
    if (!config) return null;
    const checked: AgentConfig = { ...config };
    delete checked.experimental; // server-filled only
    if (checked.skill_spec && checked.skills?.length) {
      throw ApiError.invalid('agent_config.skills', 'cannot be combined with skill_spec');
    }
    this.harnessTypes.assertKnown(checked.harness?.type, 'agent_config.harness.type');
    checked.approvals = checkedApprovals(checked.approvals, 'agent_config.approvals');
    if (!checked.approvals) delete checked.approvals;
    if (checked.mcp_servers) {
      assertMcpServers(checked.mcp_servers, 'agent_config.mcp_servers');
      checked.mcp_servers = await this.mcpSecrets.seal(
        teamId,
        checked.mcp_servers,
        'agent_config.mcp_servers',
        before?.mcp_servers,
      );
    }
    if (checked.model_id) this.models.resolveForRun(checked.model_id, 'agent_config.model_id');
    return Object.keys(checked).length ? checked : null;
  }

  private async assertUsableAgent(teamId: string, uid: string): Promise<void> {
    if (!(await this.identities.findActive(teamId, uid))) {
      throw ApiError.invalid(
        'agent_uid',
        `unknown agent identity "${uid}" (GET /agent/identities lists the team's agents)`,
      );
    }
    if (!(await this.availability.isAvailable(teamId, uid))) {
      throw new ApiError(
        'not_authorized',
        `agent "${uid}" is unavailable: it is beyond the team's plan limit of agent identities`,
        { title: 'Agent unavailable' },
      );
    }
  }
}
