import { DynamicModule, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import type { Role } from '../../config/app-config';
import { SandboxModule } from '../workers';
import { HEALTH_ROLES, Readiness } from './readiness.service';

/** Liveness and readiness checks of one Nest application, whose roles are given. */
@Module({})
export class HealthChecksModule {
  static forRoles(roles: Role[]): DynamicModule {
    return {
      module: HealthChecksModule,
      global: true,
      imports: [
        TerminusModule.forRoot({ errorLogStyle: 'json' }),
        // A worker is ready only with a working sandbox.
        ...(roles.includes('worker') ? [SandboxModule] : []),
      ],
      providers: [{ provide: HEALTH_ROLES, useValue: roles }, Readiness],
      exports: [Readiness],
    };
  }
}
