import { Module } from '@nestjs/common';
import {
  SANDBOX_BACKEND_CONTRIBUTIONS,
  SandboxBackendContribution,
  SandboxBackendRegistry,
} from './sandbox-backend-registry';
import { SandboxService } from './sandbox.service';

/**
 * The sandbox boundary: where every agent-controlled program runs, on the backend AMBIENT_SANDBOX
 * chooses among the registered ones (the sandbox backend extension point).
 */
@Module({
  providers: [
    {
      provide: SandboxBackendRegistry,
      inject: [SANDBOX_BACKEND_CONTRIBUTIONS],
      useFactory: (contributions: SandboxBackendContribution[]) =>
        new SandboxBackendRegistry().registerAll(contributions, undefined),
    },
    SandboxService,
  ],
  exports: [SandboxService, SandboxBackendRegistry],
})
export class SandboxModule {}
