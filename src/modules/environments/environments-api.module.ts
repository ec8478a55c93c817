import { DynamicModule, Module, Type } from '@nestjs/common';
import { TeamsModule } from '../teams';
import { EnvironmentsController } from './environments.controller';
import { EnvironmentsModule } from './environments.module';
import { NetworkPolicyController } from './network-policy/network-policy.controller';

/**
 * `/agent/environments` on the API role. Each environment shows its latest run, read through the
 * EnvironmentLatestRuns port; the runs module provides it, and since runs imports environments,
 * the app passes that module in rather than this file importing it.
 */
@Module({})
export class EnvironmentsApiModule {
  static withRuns(runsModule: Type<unknown>): DynamicModule {
    return {
      module: EnvironmentsApiModule,
      imports: [EnvironmentsModule, TeamsModule, runsModule],
      controllers: [EnvironmentsController, NetworkPolicyController],
    };
  }
}
