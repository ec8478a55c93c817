import { Inject, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { consoleAssets } from './console-assets';

/**
 * The web console (console/, built into dist/console): served by the api role at /console,
 * outside the API prefix and its bearer auth; the console itself signs in with an API key.
 */
@Module({})
export class ConsoleModule implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    // Registered before Nest's own not-found handler, which is added after the init hooks.
    this.adapterHost.httpAdapter.use(consoleAssets(this.config.server.consoleDir));
  }
}
