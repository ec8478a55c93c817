import { Global, Module } from '@nestjs/common';
import {
  SIGNATURE_VERIFIER_CONTRIBUTIONS,
  SignatureVerifierContribution,
  SignatureVerifierRegistry,
} from './signature-verifier-registry';

/**
 * The signature scheme extension point: the registry filled from the contributions the
 * application is composed with. Global: the ingress, webhook management and factory definitions
 * all read it.
 */
@Global()
@Module({
  providers: [
    {
      provide: SignatureVerifierRegistry,
      inject: [SIGNATURE_VERIFIER_CONTRIBUTIONS],
      useFactory: (contributions: SignatureVerifierContribution[]) =>
        new SignatureVerifierRegistry().registerAll(contributions, undefined),
    },
  ],
  exports: [SignatureVerifierRegistry],
})
export class SignatureVerifiersModule {}
