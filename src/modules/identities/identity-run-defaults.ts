import type { AgentConfig } from '../run-config';
import type { AgentSettings } from './agent-settings';

/**
 * The run config an agent identity executes with: what the run asks for wins, the agent's
 * settings fill the gaps (model: run → agent's base_model → catalogue default). MCP servers and
 * secrets are merged, the run's entries first.
 */
export function withIdentityDefaults(config: AgentConfig, agent: AgentSettings): AgentConfig {
  const merged: AgentConfig = { ...config };
  merged.model_id ??= agent.base_model;
  merged.base_prompt ??= agent.prompt;
  merged.environment_id ??= agent.environment_id;
  merged.harness ??= agent.harness;
  merged.harness_auth_secrets ??= agent.harness_auth_secrets;
  merged.inference_providers ??= agent.inference_providers;
  merged.credential_strategy ??= agent.credential_strategy;
  merged.worker_host ??= agent.worker_host;
  if (agent.default_runner_uid) merged.runner_id ??= agent.default_runner_uid;
  if (agent.memory?.attached_stores.length && !merged.memory_stores?.length) {
    merged.memory_stores = agent.memory.attached_stores;
  }
  if (agent.mcp_servers) merged.mcp_servers = { ...agent.mcp_servers, ...config.mcp_servers };
  if (agent.secrets?.length) {
    const names = new Set((config.secrets ?? []).map((s) => s.name));
    merged.secrets = [
      ...(config.secrets ?? []),
      ...agent.secrets.filter((s) => !names.has(s.name)),
    ];
  }
  for (const key of Object.keys(merged) as (keyof AgentConfig)[]) {
    if (merged[key] === undefined) delete merged[key];
  }
  return merged;
}
