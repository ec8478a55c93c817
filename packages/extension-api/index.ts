/**
 * @ambient/extension-api: the types an Ambient extension fills in (docs/extending.md). Types
 * only, re-exported from where Ambient defines and uses them: importing this package loads
 * nothing at run time. In this repository it resolves through tsconfig `paths`.
 */
export type {
  AmbientExtension,
  ExtensionContext,
  ExtensionLog,
  ExtensionServices,
  SettingDeclaration,
  SettingType,
  SettingValue,
  SettingValues,
} from '../../src/extensions/extension.types';
export type {
  ChatMessage,
  Harness,
  HarnessContext,
  HarnessResult,
  TokenUsage,
} from '../../src/modules/workers/harness/harness.types';
export type { HarnessFactoryContext } from '../../src/modules/workers/harness/harness-registry';
export type {
  SignatureVerifier,
  SignedContent,
  SignedRequest,
  Verification,
} from '../../src/modules/webhooks/verifiers/signature-verifier';
export type {
  Sandbox,
  SandboxBackend,
  SandboxBackendContext,
  SandboxBackendFactory,
  SandboxProbe,
  SandboxProcess,
  SandboxSpawnOptions,
  SandboxSpec,
} from '../../src/modules/workers/sandbox/sandbox.types';
export type {
  AuthRequest,
  AuthStrategy,
  AuthStrategyContext,
  DirectoryUser,
  UserDirectory,
} from '../../src/modules/teams/auth/auth-strategy';
export type { Principal } from '../../src/common/auth/principal';
export type { TeamRole } from '../../src/common/auth/roles';
