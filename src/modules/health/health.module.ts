import { Module } from '@nestjs/common';
import { SandboxModule } from '../workers';
import { HealthController } from './health.controller';

/** The api role's health endpoints (Readiness comes from HealthChecksModule, in every role). */
@Module({ imports: [SandboxModule], controllers: [HealthController] })
export class HealthModule {}
