import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';

/** The api role's health endpoints (Readiness comes from HealthChecksModule, in every role). */
@Module({ controllers: [HealthController] })
export class HealthModule {}
