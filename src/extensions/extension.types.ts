import type { AppConfig } from '../config/app-config';
import type { Harness } from '../modules/execution/harness/harness.types';
import type { SandboxBackendFactory } from '../modules/execution/sandbox/sandbox.types';
import type { AuthStrategy, AuthStrategyContext } from '../modules/teams/auth/auth-strategy';
import type { SignatureVerifier } from '../modules/webhooks/verifiers/signature-verifier';

/** What an extension's factories receive when the application starts. */
export interface ExtensionContext {
  config: AppConfig;
}

/**
 * A named bundle of what it registers at Ambient's extension points. Built-ins are one such
 * extension (`builtinExtension`); others come from `startAmbient(config, { extensions })` or from
 * modules named in AMBIENT_EXTENSIONS (their default export).
 */
export interface AmbientExtension {
  name: string;
  /** Harnesses a run may choose by `config.harness.type`. */
  harnesses?: readonly Harness[] | ((context: ExtensionContext) => readonly Harness[]);
  /** Signature schemes a webhook may choose by `signature_scheme`. */
  signatureVerifiers?: readonly SignatureVerifier[];
  /** Sandbox backends AMBIENT_SANDBOX may name (the built-in extension registers docker, bubblewrap, process). */
  sandboxBackends?: readonly SandboxBackendFactory[];
  /** Ways of recognising API callers, asked in order after Ambient's API key strategy. */
  authStrategies?:
    readonly AuthStrategy[] | ((context: AuthStrategyContext) => readonly AuthStrategy[]);
}

/** The multi-provider token: every extension of the application, built-ins first. */
export const AMBIENT_EXTENSIONS = Symbol('AMBIENT_EXTENSIONS');
