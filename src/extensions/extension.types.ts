import type { AppConfig } from '../config/app-config';
import type { Harness } from '../modules/workers/harness/harness.types';
import type { HarnessFactoryContext } from '../modules/workers/harness/harness-registry';
import type { SandboxBackendFactory } from '../modules/workers/sandbox/sandbox.types';
import type { AuthStrategy, AuthStrategyContext } from '../modules/teams/auth/auth-strategy';
import type { SignatureVerifier } from '../modules/webhooks/verifiers/signature-verifier';

/** The types a setting may have; its environment variable's text is read as one of them. */
export type SettingType = 'string' | 'number' | 'boolean';
export type SettingValue = string | number | boolean;

/**
 * One environment variable an extension reads, declared so start-up validates it (and fails
 * naming the variable) before the extension runs.
 */
export interface SettingDeclaration {
  /** The environment variable: upper-case letters, digits and `_` (`AMBIENT_…` is Ambient's own). */
  name: string;
  /** `number`: a finite number; `boolean`: true/false, 1/0 or on/off. */
  type: SettingType;
  /** Taken when the variable is unset or empty; of the declared type. */
  default?: SettingValue;
  /** Start-up fails when the variable is unset and there is no default. */
  required?: boolean;
  /** What the setting does, for the error naming it and for the extension's documentation. */
  description: string;
}

/**
 * An extension's settings as start-up read them, by variable name, of their declared types; a
 * setting that is unset and has no default is absent.
 */
export type SettingValues = Readonly<Record<string, SettingValue | undefined>>;

/** Lines in Ambient's log, marked with the extension's name. */
export interface ExtensionLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/**
 * Everything of Ambient an extension's `init` may use: handed in explicitly (not Ambient's
 * dependency container), so this is the whole of it.
 */
export interface ExtensionServices {
  /** The extension's own settings, validated from the environment at start-up. */
  settings: SettingValues;
  log: ExtensionLog;
  /** Ambient's configuration; on the self-hosted worker, what that machine's environment says. */
  config: Readonly<AppConfig>;
}

/** What an extension's factories (`harnesses`, `authStrategies` as functions) receive besides their point's context. */
export interface ExtensionContext {
  config: AppConfig;
  /** The extension's own settings, as `init` gets them. */
  settings: SettingValues;
}

/**
 * A named bundle of what it registers at Ambient's extension points. Built-ins are one such
 * extension (`builtinExtension`); others come from `startAmbient(config, { extensions })` or from
 * modules named in AMBIENT_EXTENSIONS (their default export). Each point belongs to the module
 * that uses it; composition (ExtensionSet) hands each contribution to its registry.
 */
export interface AmbientExtension {
  name: string;
  /** The environment variables it reads: validated at start-up, then in `settings` of init and the factories. */
  settings?: readonly SettingDeclaration[];
  /**
   * Called once when the process starts (before requests and runs are served; after the
   * registries took the extension's contributions): open connections, check a service. A
   * rejection fails start-up, naming the extension.
   */
  init?(services: ExtensionServices): void | Promise<void>;
  /** Called once when the process shuts down, after the runs and requests it served ended. */
  destroy?(): void | Promise<void>;
  /** Harnesses a run may choose by `config.harness.type` (the workers module's registry). */
  harnesses?:
    | readonly Harness[]
    | ((context: HarnessFactoryContext & ExtensionContext) => readonly Harness[]);
  /** Signature schemes a webhook may choose by `signature_scheme` (the webhooks module's registry). */
  signatureVerifiers?: readonly SignatureVerifier[];
  /** Sandbox backends AMBIENT_SANDBOX may name (the built-in extension registers docker, bubblewrap, process). */
  sandboxBackends?: readonly SandboxBackendFactory[];
  /** Ways of recognising API callers, asked in order after Ambient's API key strategy (the teams module's registry). */
  authStrategies?:
    | readonly AuthStrategy[]
    | ((context: AuthStrategyContext & ExtensionContext) => readonly AuthStrategy[]);
}
