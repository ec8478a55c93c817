import { DynamicModule, Module } from '@nestjs/common';
import type { Role } from '../../config/app-config';
import { TeamsModule } from '../teams/teams.module';
import { ConnectedWorkersController } from './connected-workers.controller';
import { HarnessSupportController } from './harness-support.controller';
import { SelfHostedDispatcher } from './self-hosted-dispatcher.service';
import { SelfHostedSweeper } from './self-hosted-sweeper.service';
import { WorkerGateway } from './worker-gateway.service';
import { WorkerPresence } from './worker-presence.service';

/**
 * Self-hosted workers (api role): the worker websocket on the API's HTTP server, worker presence
 * in Redis, offering runs to connected workers, the run-scoped `/harness-support` API their
 * executions report through, and `GET /agent/connected-self-hosted-workers`.
 */
@Module({})
export class WorkersModule {
  /** `runs` is the application's RunsModule (Nest tells dynamic modules apart by reference). */
  static forRoles(roles: Role[], runs: DynamicModule): DynamicModule {
    const api = roles.includes('api');
    return {
      module: WorkersModule,
      imports: [runs, TeamsModule],
      controllers: api ? [ConnectedWorkersController, HarnessSupportController] : [],
      providers: api
        ? [WorkerPresence, SelfHostedDispatcher, WorkerGateway, SelfHostedSweeper]
        : [],
    };
  }
}
