import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretsModule } from '../secrets/secrets.module';
import type { Role } from '../../config/app-config';
import { IdentitiesModule } from '../identities/identities.module';
import { ModelsModule } from '../models/models.module';
import { TeamsModule } from '../teams/teams.module';
import { ScheduleFiring } from './schedule-firing.entity';
import { ScheduleFirings } from './schedule-firings.service';
import { ScheduleValidator } from './schedule-validator';
import { Schedule } from './schedule.entity';
import { SCHEDULER_CLOCK, systemClock } from './scheduler-clock';
import { SchedulerLoop } from './scheduler-loop.service';
import { SchedulesController } from './schedules.controller';
import { SchedulesService } from './schedules.service';

@Module({})
export class SchedulesModule {
  /**
   * The API role serves `/agent/schedules`; the scheduler role fires them. `runs` is the very
   * RunsModule instance the application imports (a second one would run a second worker).
   */
  static forRoles(roles: Role[], runs: DynamicModule): DynamicModule {
    return {
      module: SchedulesModule,
      imports: [
        TypeOrmModule.forFeature([Schedule, ScheduleFiring]),
        runs,
        IdentitiesModule,
        TeamsModule,
        ModelsModule,
        SecretsModule,
      ],
      controllers: roles.includes('api') ? [SchedulesController] : [],
      providers: [
        { provide: SCHEDULER_CLOCK, useValue: systemClock },
        SchedulesService,
        ScheduleValidator,
        ScheduleFirings,
        ...(roles.includes('scheduler') ? [SchedulerLoop] : []),
      ],
    };
  }
}
