import { createHarnesses } from '../modules/workers/harness/harnesses';
import { BUILTIN_SANDBOX_BACKENDS } from '../modules/workers/sandbox/builtin-backends';
import { apiKeyStrategy } from '../modules/teams/auth/api-key.strategy';
import { sessionStrategy } from '../modules/teams/sessions/session.strategy';
import { BUILTIN_VERIFIERS } from '../modules/webhooks/verifiers';
import type { AmbientExtension } from './extension.types';

/**
 * Ambient's own harnesses, signature schemes, sandbox backends and auth strategies (API keys, console sessions), registered like
 * any other extension.
 */
export const builtinExtension: AmbientExtension = {
  name: 'ambient',
  harnesses: ({ config }) => createHarnesses(config),
  signatureVerifiers: BUILTIN_VERIFIERS,
  sandboxBackends: BUILTIN_SANDBOX_BACKENDS,
  authStrategies: (context) => [apiKeyStrategy(context), sessionStrategy(context)],
};
