import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { IdentitiesModule } from '../identities';
import { LimitsController } from './limits.controller';
import { LimitsService } from './limits.service';
import { RunLimits } from './run-limits.entity';
import { RunLimitsRepository } from './run-limits.repository';

/** Limits of teams and agent identities, for every role (claims and executions read them). */
@Module({
  imports: [TypeOrmModule.forFeature([RunLimits]), IdentitiesModule],
  providers: [LimitsService, RunLimitsRepository],
  exports: [LimitsService],
})
export class LimitsModule {}

/** GET/PUT /limits and /agent/identities/{uid}/limits on the API role. */
@Module({
  imports: [LimitsModule],
  controllers: [LimitsController],
})
export class LimitsApiModule {}
