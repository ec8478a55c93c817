import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SecretsModule } from '../secrets';
import { EnvironmentsModule } from '../environments';
import { RunsModule } from '../runs';
import { IdentitiesModule } from '../identities';
import { ModelsModule } from '../models';
import { TeamsModule } from '../teams';
import { ScheduleFiring } from './schedule-firing.entity';
import { ScheduleFirings } from './schedule-firings.service';
import { ScheduleFiringRepository } from './schedule-firing.repository';
import { ScheduleValidator } from './schedule-validator';
import { Schedule } from './schedule.entity';
import { ScheduleRepository } from './schedule.repository';
import { ScheduleSecretScope } from './schedule-secret-scope';
import { SCHEDULER_CLOCK, systemClock } from './scheduler-clock';
import { SchedulerLoop } from './scheduler-loop.service';
import { SchedulesController } from './schedules.controller';
import { SchedulesService } from './schedules.service';

/** Schedules and their firings, for every role (`ScheduleFirings` starts the runs). */
@Module({
  imports: [
    TypeOrmModule.forFeature([Schedule, ScheduleFiring]),
    RunsModule,
    EnvironmentsModule,
    IdentitiesModule,
    TeamsModule,
    ModelsModule,
    SecretsModule,
  ],
  providers: [
    { provide: SCHEDULER_CLOCK, useValue: systemClock },
    SchedulesService,
    ScheduleValidator,
    ScheduleFirings,
    ScheduleRepository,
    ScheduleFiringRepository,
    ScheduleSecretScope,
  ],
  exports: [SchedulesService, ScheduleValidator, ScheduleFirings, SCHEDULER_CLOCK],
})
export class SchedulesModule {}

/** `/agent/schedules` on the API role. */
@Module({ imports: [SchedulesModule, TeamsModule], controllers: [SchedulesController] })
export class SchedulesApiModule {}

/** The scheduler role: fires due schedules. */
@Module({ imports: [SchedulesModule], providers: [SchedulerLoop] })
export class SchedulerModule {}
