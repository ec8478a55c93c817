import type { Contribution } from '../common/registry/registry';
import type { AppConfig } from '../config/app-config';
import type { HarnessContribution } from '../modules/workers/harness/harness-registry';
import type { SandboxBackendContribution } from '../modules/workers/sandbox/sandbox-backend-registry';
import { SandboxBackendRegistry } from '../modules/workers/sandbox/sandbox-backend-registry';
import type { AuthStrategyContribution } from '../modules/teams/auth/auth-strategy-registry';
import type { SignatureVerifierContribution } from '../modules/webhooks/verifiers/signature-verifier-registry';
import { builtinExtension } from './builtin.extension';
import { readSettings } from './extension-settings';
import type {
  AmbientExtension,
  ExtensionContext,
  ExtensionLog,
  SettingValues,
} from './extension.types';

/** What the process that starts the extensions hands them: its configuration and its log. */
export interface ExtensionHost {
  config: Readonly<AppConfig>;
  logFor(extension: string): ExtensionLog;
}

type Entries<T, C> = readonly T[] | ((context: C & ExtensionContext) => readonly T[]);

/**
 * The extensions of one process, Ambient's built-in one first, with their settings read: as
 * contributions to each extension point (what composition hands to the registry of the module
 * that owns the point), and their lifecycle (init once when the process starts, destroy once when
 * it stops, however many of its applications share the set).
 */
export class ExtensionSet {
  private users = 0;
  private starting?: Promise<void>;
  /** Initialised extensions, in init order. */
  private live: AmbientExtension[] = [];
  private host?: ExtensionHost;

  private constructor(
    readonly extensions: readonly AmbientExtension[],
    private readonly settings: ReadonlyMap<AmbientExtension, SettingValues>,
  ) {}

  /**
   * The built-in extension, then `extensions` in their order (checked: see checkedExtension),
   * with their settings read from `env`: throws naming the variable of a bad value.
   */
  static of(
    extensions: readonly AmbientExtension[],
    env: NodeJS.ProcessEnv = process.env,
  ): ExtensionSet {
    const all = [builtinExtension, ...extensions];
    const declaredBy = new Map<string, string>();
    const settings = new Map<AmbientExtension, SettingValues>();
    for (const extension of all) {
      for (const { name } of extension.settings ?? []) {
        const earlier = declaredBy.get(name);
        if (earlier !== undefined) {
          throw new Error(
            `extension ${extension.name}: setting ${name} is already declared by ${earlier}`,
          );
        }
        declaredBy.set(name, extension.name);
      }
      settings.set(extension, readSettings(extension, env));
    }
    return new ExtensionSet(all, settings);
  }

  settingsOf(extension: AmbientExtension): SettingValues {
    return this.settings.get(extension) ?? {};
  }

  harnesses(): HarnessContribution[] {
    return this.contributions((e) => e.harnesses);
  }

  signatureVerifiers(): SignatureVerifierContribution[] {
    return this.lists((e) => e.signatureVerifiers);
  }

  sandboxBackends(): SandboxBackendContribution[] {
    return this.lists((e) => e.sandboxBackends);
  }

  authStrategies(): AuthStrategyContribution[] {
    return this.contributions((e) => e.authStrategies);
  }

  /** The sandbox backends as the workers register them: AMBIENT_SANDBOX is checked against it at start-up. */
  sandboxBackendRegistry(): SandboxBackendRegistry {
    return new SandboxBackendRegistry().registerAll(this.sandboxBackends(), undefined);
  }

  /**
   * Calls each extension's `init` in order, once for the process: later callers (a second
   * application of the same process) wait for the first. A failed init destroys those already
   * initialised and rejects, naming the extension.
   */
  start(host: ExtensionHost): Promise<void> {
    this.users += 1;
    this.starting ??= this.initAll(host);
    return this.starting;
  }

  /** Calls each initialised extension's `destroy`, in reverse order, when the last user stops. */
  async stop(): Promise<void> {
    if (this.users === 0) return;
    this.users -= 1;
    if (this.users > 0) return;
    await this.starting?.catch(() => undefined);
    this.starting = undefined;
    await this.destroyAll();
  }

  private async initAll(host: ExtensionHost): Promise<void> {
    this.host = host;
    for (const extension of this.extensions) {
      try {
        await extension.init?.({
          settings: this.settingsOf(extension),
          log: host.logFor(extension.name),
          config: host.config,
        });
      } catch (err) {
        await this.destroyAll();
        throw new Error(`extension ${extension.name}: init failed: ${messageOf(err)}`);
      }
      this.live.push(extension);
    }
  }

  /** A failing destroy is logged: the others still run, and shutdown goes on. */
  private async destroyAll(): Promise<void> {
    const live = this.live.reverse();
    this.live = [];
    for (const extension of live) {
      try {
        await extension.destroy?.();
      } catch (err) {
        this.host?.logFor(extension.name).error(`destroy failed: ${messageOf(err)}`);
      }
    }
  }

  /** Each extension's entries at a point that takes lists only. */
  private lists<T>(
    point: (extension: AmbientExtension) => readonly T[] | undefined,
  ): Contribution<T>[] {
    return this.extensions.flatMap((extension) => {
      const entries = point(extension);
      return entries === undefined ? [] : [{ owner: extension.name, entries }];
    });
  }

  /** Each extension's entries at a point that also takes a function: it gets the extension's settings too. */
  private contributions<T, C extends { config: AppConfig }>(
    point: (extension: AmbientExtension) => Entries<T, C> | undefined,
  ): Contribution<T, C>[] {
    return this.extensions.flatMap((extension) => {
      const entries = point(extension);
      if (entries === undefined) return [];
      const settings = this.settingsOf(extension);
      const resolved =
        typeof entries === 'function' ? (context: C) => entries({ ...context, settings }) : entries;
      return [{ owner: extension.name, entries: resolved }];
    });
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
