import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { TeamsModule } from '../teams/teams.module';
import { EnvironmentsController } from './environments.controller';
import { EnvironmentsModule } from './environments.module';

/**
 * `/agent/environments` on the API role. Its own file: RunsModule (each environment's latest run)
 * imports EnvironmentsModule, so environments.module.ts cannot import runs.module.ts back.
 */
@Module({
  imports: [EnvironmentsModule, TeamsModule, RunsModule],
  controllers: [EnvironmentsController],
})
export class EnvironmentsApiModule {}
