import { Module } from '@nestjs/common';
import { RunsModule } from '../runs';
import { UsageController } from './usage.controller';

/** GET /usage on the API role: what the team's runs used and cost, summed from the runs table. */
@Module({
  imports: [RunsModule],
  controllers: [UsageController],
})
export class UsageApiModule {}
