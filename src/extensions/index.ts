/**
 * The helpers Ambient's built-ins use that an extension written in TypeScript may reuse when it
 * embeds Ambient (`startAmbient(config, { extensions })`). The types an extension fills in are
 * the package `@ambient/extension-api` (packages/extension-api). See docs/extending.md.
 */
export {
  bodyField,
  nonEmptySecret,
  unsigned,
  verified,
} from '../modules/webhooks/verifiers/signature-verifier';
export { anyHexMatches, hmacHex } from '../modules/webhooks/verifiers/hmac';
export { ProcessSandboxBackend } from '../modules/workers/sandbox/backends/process/process-sandbox';
export { bearerTokenOf } from '../modules/teams/auth/api-key.strategy';
export { builtinExtension } from './builtin.extension';
