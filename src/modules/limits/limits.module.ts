import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AgentIdentity } from '../identities';
import { LimitsController } from './limits.controller';
import { LimitsService } from './limits.service';
import { RunLimits } from './run-limits.entity';

/** Limits of teams and agent identities, for every role (claims and executions read them). */
@Module({
  imports: [TypeOrmModule.forFeature([RunLimits, AgentIdentity])],
  providers: [LimitsService],
  exports: [LimitsService],
})
export class LimitsModule {}

/** GET/PUT /limits and /agent/identities/{uid}/limits on the API role. */
@Module({
  imports: [LimitsModule],
  controllers: [LimitsController],
})
export class LimitsApiModule {}
