import { Module } from '@nestjs/common';
import { LimitsModule } from '../limits';
import { RunsModule } from '../runs';
import { UsageController } from './usage.controller';

/**
 * GET /usage on the API role: what the team's runs used and cost, summed from the runs table, and
 * GET /usage/limits: this month's spend and the runs now, against the team's limits.
 */
@Module({
  imports: [RunsModule, LimitsModule],
  controllers: [UsageController],
})
export class UsageApiModule {}
