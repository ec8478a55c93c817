import { createHarnesses } from '../modules/execution/harness/harnesses';
import { BUILTIN_VERIFIERS } from '../modules/webhooks/verifiers';
import type { AmbientExtension } from './extension.types';

/** Ambient's own harnesses and signature schemes, registered like any other extension. */
export const builtinExtension: AmbientExtension = {
  name: 'ambient',
  harnesses: ({ config }) => createHarnesses(config),
  signatureVerifiers: BUILTIN_VERIFIERS,
};
