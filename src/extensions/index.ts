/**
 * Ambient's published extension surface: what an extension module may import (types and the
 * small helpers built-ins use). See README "Extending Ambient".
 */
export type { AmbientExtension, ExtensionContext } from './extension.types';
export type {
  ChatMessage,
  Harness,
  HarnessContext,
  HarnessResult,
  TokenUsage,
} from '../modules/execution/harness/harness.types';
export type {
  SignatureVerifier,
  SignedContent,
  SignedRequest,
  Verification,
} from '../modules/webhooks/verifiers/signature-verifier';
export {
  bodyField,
  nonEmptySecret,
  unsigned,
  verified,
} from '../modules/webhooks/verifiers/signature-verifier';
export { anyHexMatches, hmacHex } from '../modules/webhooks/verifiers/hmac';
export type {
  Sandbox,
  SandboxBackend,
  SandboxBackendContext,
  SandboxBackendFactory,
  SandboxProcess,
  SandboxSpawnOptions,
  SandboxSpec,
} from '../modules/execution/sandbox/sandbox.types';
export { ProcessSandboxBackend } from '../modules/execution/sandbox/backends/process/process-sandbox';
export type {
  AuthRequest,
  AuthStrategy,
  AuthStrategyContext,
  DirectoryUser,
  UserDirectory,
} from '../modules/teams/auth/auth-strategy';
export { bearerTokenOf } from '../modules/teams/auth/api-key.strategy';
export type { Principal } from '../common/auth/principal';
export type { TeamRole } from '../common/auth/roles';
export { builtinExtension } from './builtin.extension';
