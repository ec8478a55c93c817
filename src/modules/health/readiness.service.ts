import { Inject, Injectable, Optional, ServiceUnavailableException } from '@nestjs/common';
import {
  HealthCheckResult,
  HealthCheckService,
  HealthIndicatorFunction,
  HealthIndicatorService,
} from '@nestjs/terminus';
import { InjectDataSource } from '@nestjs/typeorm';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS } from '../../common/redis/redis.module';
import type { Role } from '../../config/app-config';
import { SandboxService } from '../workers';
import { pingDatabase } from '../../database/database-ping';

/** The roles whose needs the readiness check covers (those of the Nest application it is in). */
export const HEALTH_ROLES = Symbol('HEALTH_ROLES');
/** A dependency that does not answer within this is reported down (probes time out at ~1 s+). */
const CHECK_TIMEOUT_MS = 2000;

export interface HealthAnswer {
  statusCode: 200 | 503;
  body: HealthCheckResult;
}

/**
 * Liveness and readiness in @nestjs/terminus' shape, for the HTTP controllers and the health-only
 * server of processes without the api role. Readiness checks what this process's roles need:
 * MySQL and Redis for every role, and for the worker role a usable sandbox backend.
 */
@Injectable()
export class Readiness {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(HEALTH_ROLES) private readonly roles: Role[],
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Optional() private readonly sandboxes?: SandboxService,
  ) {}

  /** No dependency is checked: answering at all shows the event loop runs. */
  live(): Promise<HealthAnswer> {
    return this.answer([]);
  }

  ready(): Promise<HealthAnswer> {
    const checks: HealthIndicatorFunction[] = [
      () =>
        this.indicators
          .check('database')
          .attempt(() => pingDatabase(this.dataSource))
          .withTimeout(CHECK_TIMEOUT_MS),
      () =>
        this.indicators
          .check('redis')
          .attempt(async () => void (await this.redis.ping()))
          .withTimeout(CHECK_TIMEOUT_MS),
    ];
    if (this.roles.includes('worker')) checks.push(() => this.sandbox());
    return this.answer(checks);
  }

  private async sandbox() {
    const check = this.indicators.check('sandbox');
    const description = this.sandboxes?.describe();
    if (!description || description.backend === 'unavailable') {
      return check.down({ backend: 'unavailable', message: description?.detail ?? 'no sandbox' });
    }
    return check.up({ backend: description.backend, isolated: description.isolated });
  }

  private async answer(checks: HealthIndicatorFunction[]): Promise<HealthAnswer> {
    try {
      return { statusCode: 200, body: await this.health.check(checks) };
    } catch (err) {
      if (!(err instanceof ServiceUnavailableException)) throw err;
      return { statusCode: 503, body: err.getResponse() as HealthCheckResult };
    }
  }
}
