import { DynamicModule, Global, Module } from '@nestjs/common';
import { HARNESS_CONTRIBUTIONS } from '../modules/workers/harness/harness-registry';
import { SANDBOX_BACKEND_CONTRIBUTIONS } from '../modules/workers/sandbox/sandbox-backend-registry';
import { AUTH_STRATEGY_CONTRIBUTIONS } from '../modules/teams/auth/auth-strategy-registry';
import { SIGNATURE_VERIFIER_CONTRIBUTIONS } from '../modules/webhooks/verifiers/signature-verifier-registry';
import { ExtensionLifecycle } from './extension-lifecycle';
import { ExtensionSet } from './extension-set';

/**
 * Composition of one application: each extension point's contributions (built-ins first) under
 * the token of the module that owns the point, whose registry takes them, and the extensions'
 * lifecycle (init, destroy). Global like the config.
 */
@Global()
@Module({})
export class ExtensionsModule {
  static forExtensions(extensions: ExtensionSet): DynamicModule {
    const contributions = [
      { provide: HARNESS_CONTRIBUTIONS, useValue: extensions.harnesses() },
      { provide: SIGNATURE_VERIFIER_CONTRIBUTIONS, useValue: extensions.signatureVerifiers() },
      { provide: SANDBOX_BACKEND_CONTRIBUTIONS, useValue: extensions.sandboxBackends() },
      { provide: AUTH_STRATEGY_CONTRIBUTIONS, useValue: extensions.authStrategies() },
    ];
    return {
      module: ExtensionsModule,
      providers: [
        { provide: ExtensionSet, useValue: extensions },
        ...contributions,
        ExtensionLifecycle,
      ],
      exports: [ExtensionSet, ...contributions.map((c) => c.provide)],
    };
  }
}
