import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { AmbientMetrics } from '../../metrics';
import { lingeringRemovalsSettled } from './cgroup-limits';
import { preparesInChild } from './off-loop-spawn';
import { egressServerOptions } from './egress/execution-egress';
import { SandboxBackendRegistry } from './sandbox-backend-registry';
import { Sandboxes } from './sandboxes';

/**
 * The one way Ambient's workers run agent-controlled programs: a sandbox per execution on the
 * backend chosen at start-up (`AMBIENT_SANDBOX`).
 */
@Injectable()
export class SandboxService extends Sandboxes implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Sandbox');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    backends: SandboxBackendRegistry,
    metrics: AmbientMetrics,
  ) {
    super(
      config.sandbox,
      resolve(config.runs.workspaceRoot),
      deploymentName(config),
      (line) => this.logger.warn(line),
      backends.list(),
      {
        handout: (result, seconds) => metrics.sandboxHandout(result, seconds),
        handoutFailed: (result, seconds) => metrics.sandboxHandoutFailed(result, seconds),
        returned: (outcome) => metrics.sandboxReturn(outcome),
      },
      egressServerOptions(config.egress),
    );
  }

  /**
   * Only the worker role runs executions. Every role has this service (the API's health describes
   * the backend), and an API or scheduler replica given the workers' settings (AMBIENT_DOCKER_POOL_SIZE)
   * would otherwise fill a pool of containers nobody takes, at the daemons' cost, beside the workers'.
   */
  protected override opensSandboxes(): boolean {
    return this.config.roles.includes('worker');
  }

  async onModuleInit(): Promise<void> {
    const { description } = await this.select();
    if (description.isolated) {
      this.logger.log(`agent programs run in ${description.backend} sandboxes`);
    }
    if (description.backend !== 'docker') {
      this.logger.log(
        preparesInChild()
          ? 'sandbox processes start from the compiled spawn helper (native/build/ambient-spawner)'
          : 'sandbox processes start from the Node spawn helper (the compiled one is not built, or AMBIENT_PROCESS_SPAWNER=node): each costs more CPU (docs/PERFORMANCE.md)',
      );
    }
  }

  /**
   * Idle pooled containers go with the process (those handed out close with their runs), and so
   * do the run cgroups still being removed in the background.
   */
  async onApplicationShutdown(): Promise<void> {
    await this.drain();
    await lingeringRemovalsSettled();
  }
}

/** One name per deployment: its database and Redis prefix, hashed (nothing secret in labels). */
export function deploymentName(config: AppConfig): string {
  const url = new URL(config.database.url);
  const where = `${url.host}${url.pathname}|${config.redis.prefix}`;
  return createHash('sha256').update(where).digest('hex').slice(0, 16);
}
