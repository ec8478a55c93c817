import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import type { ExtensionLog } from './extension.types';
import { ExtensionSet } from './extension-set';

/**
 * Starts the extensions when the application initialises (before its modules, whose lifecycle
 * hooks run after those of global modules) and stops them when it has shut down. Every
 * application of a process shares its ExtensionSet, which inits and destroys each extension once.
 */
@Injectable()
export class ExtensionLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    private readonly extensions: ExtensionSet,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): Promise<void> {
    return this.extensions.start({ config: this.config, logFor: nestLog });
  }

  onApplicationShutdown(): Promise<void> {
    return this.extensions.stop();
  }
}

function nestLog(extension: string): ExtensionLog {
  const logger = new Logger(`extension ${extension}`);
  return {
    info: (message) => logger.log(message),
    warn: (message) => logger.warn(message),
    error: (message) => logger.error(message),
  };
}
