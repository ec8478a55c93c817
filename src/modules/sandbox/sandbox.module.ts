import { Global, Module } from '@nestjs/common';
import { SandboxService } from './sandbox.service';

/** The sandbox boundary, available to every module that runs agent-controlled programs. */
@Global()
@Module({ providers: [SandboxService], exports: [SandboxService] })
export class SandboxModule {}
