import type { CatalogModel, ProviderApi } from '../../models';
import type { Sandbox } from '../sandbox/sandbox.types';
import type { ChatMessage, HarnessContext } from './harness.types';

/** The PATH of the harness specs' commands. */
export const COMMAND_PATH = '/usr/local/bin:/usr/bin:/bin';

/** A catalogue model served by the fake model server at `baseUrl`. */
export function fakeModel(baseUrl: string, api: ProviderApi = 'chat_completions'): CatalogModel {
  const kind = api === 'anthropic_messages' ? 'ANTHROPIC' : 'OPENAI';
  return {
    id: 'fake-1',
    displayName: 'Fake',
    visionSupported: false,
    provider: { name: 'fake', kind, api, baseUrl, apiKey: 'test-key', apiKeyEnv: null },
    providerModel: 'fake-model',
    maxOutputTokens: 1024,
    inputCostPerTokenUsd: 0,
    outputCostPerTokenUsd: 0,
  };
}

/**
 * The context an execution gives the harness, for a spec: one run on the fake model, a workspace
 * with its sandbox, messages recorded into `recorded`, no follow-ups, events or team secrets.
 */
export function harnessContext(
  setup: {
    modelUrl: string;
    workspaceDir: string;
    sandbox: Sandbox;
    signal: AbortSignal;
    recorded: ChatMessage[];
    userMessages: string[];
  },
  overrides: Partial<HarnessContext> = {},
): HarnessContext {
  return {
    runId: 'run-1',
    executionId: 1,
    teamId: 'team-1',
    model: fakeModel(setup.modelUrl),
    config: {},
    mode: 'normal',
    history: [],
    userMessages: setup.userMessages,
    workspaceDir: setup.workspaceDir,
    sandbox: setup.sandbox,
    commandEnv: { PATH: COMMAND_PATH, HOME: setup.workspaceDir },
    limits: { maxTurns: 10, deadline: Date.now() + 60_000, commandTimeoutSeconds: 30 },
    signal: setup.signal,
    takeFollowups: async () => [],
    recordMessage: async (message) => void setup.recorded.push(message),
    emitEvent: async () => undefined,
    teamSecret: async () => null,
    ...overrides,
  };
}
