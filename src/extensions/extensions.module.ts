import { DynamicModule, Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { HarnessRegistry } from './harness-registry';
import { SignatureVerifierRegistry } from '../modules/webhooks/verifiers/signature-verifier-registry';
import { builtinExtension } from './builtin.extension';
import { harnessRegistryOf, signatureVerifierRegistryOf } from './extension-registries';
import { AMBIENT_EXTENSIONS, AmbientExtension } from './extension.types';

/**
 * The extension points of one application: the extensions (built-ins first) and one registry per
 * point fed from them. Global like the config: every module validating or executing reads these.
 */
@Global()
@Module({})
export class ExtensionsModule {
  static forExtensions(extensions: readonly AmbientExtension[]): DynamicModule {
    return {
      module: ExtensionsModule,
      providers: [
        { provide: AMBIENT_EXTENSIONS, useValue: [builtinExtension, ...extensions] },
        {
          provide: HarnessRegistry,
          inject: [AMBIENT_EXTENSIONS, APP_CONFIG],
          useFactory: (all: AmbientExtension[], config: AppConfig) =>
            harnessRegistryOf(all, { config }),
        },
        {
          provide: SignatureVerifierRegistry,
          inject: [AMBIENT_EXTENSIONS],
          useFactory: signatureVerifierRegistryOf,
        },
      ],
      exports: [AMBIENT_EXTENSIONS, HarnessRegistry, SignatureVerifierRegistry],
    };
  }
}
