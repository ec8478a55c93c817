import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { HarnessTypes } from '../../run-config';
import { HARNESS_CONTRIBUTIONS, HarnessContribution, HarnessRegistry } from './harness-registry';

/**
 * The harness extension point: the registry filled from the contributions the application is
 * composed with (HARNESS_CONTRIBUTIONS), and the harness types validation reads from it. Global
 * like the config: runs, schedules and factory definitions validate against it without importing
 * the workers module.
 */
@Global()
@Module({
  providers: [
    {
      provide: HarnessRegistry,
      inject: [HARNESS_CONTRIBUTIONS, APP_CONFIG],
      useFactory: (contributions: HarnessContribution[], config: AppConfig) =>
        new HarnessRegistry().registerAll(contributions, { config }),
    },
    {
      provide: HarnessTypes,
      inject: [HarnessRegistry],
      useFactory: (harnesses: HarnessRegistry) => new HarnessTypes(harnesses),
    },
  ],
  exports: [HarnessRegistry, HarnessTypes],
})
export class HarnessRegistryModule {}
