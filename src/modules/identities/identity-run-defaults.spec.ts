import { withIdentityDefaults } from './identity-run-defaults';

describe('withIdentityDefaults', () => {
  const agent = {
    base_model: 'agent-model',
    prompt: 'You are careful.',
    worker_host: 'agent-box',
    default_runner_uid: 'runner-1',
    secrets: [{ name: 'SHARED' }, { name: 'AGENT_ONLY' }],
    mcp_servers: { docs: { url: 'https://docs.example' }, gh: { command: 'gh-mcp' } },
    memory: {
      attached_stores: [{ uid: 'mem', access: 'read_only', instructions: 'notes' }],
      auto_memory: { enabled: true },
    },
  };

  it('fills what the run leaves unset from the agent', () => {
    expect(withIdentityDefaults({ name: 'job' }, agent)).toEqual({
      name: 'job',
      model_id: 'agent-model',
      base_prompt: 'You are careful.',
      worker_host: 'agent-box',
      runner_id: 'runner-1',
      secrets: [{ name: 'SHARED' }, { name: 'AGENT_ONLY' }],
      mcp_servers: agent.mcp_servers,
      memory_stores: agent.memory.attached_stores,
    });
  });

  it('lets the run win and merges lists, the run first', () => {
    const merged = withIdentityDefaults(
      {
        model_id: 'run-model',
        base_prompt: 'Run prompt',
        secrets: [{ name: 'SHARED' }, { name: 'RUN_ONLY' }],
        mcp_servers: { gh: { url: 'https://gh.example' } },
      },
      agent,
    );
    expect(merged.model_id).toBe('run-model');
    expect(merged.base_prompt).toBe('Run prompt');
    expect(merged.secrets).toEqual([
      { name: 'SHARED' },
      { name: 'RUN_ONLY' },
      { name: 'AGENT_ONLY' },
    ]);
    expect(merged.mcp_servers).toEqual({
      docs: { url: 'https://docs.example' },
      gh: { url: 'https://gh.example' },
    });
  });

  it('changes nothing for an agent without settings', () => {
    expect(withIdentityDefaults({ model_id: 'm' }, {})).toEqual({ model_id: 'm' });
  });
});
