import { Module } from '@nestjs/common';
import { SandboxService } from './sandbox.service';

/** The sandbox boundary: where every agent-controlled program runs (the backend is configured). */
@Module({ providers: [SandboxService], exports: [SandboxService] })
export class SandboxModule {}
