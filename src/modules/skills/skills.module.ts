import { Module } from '@nestjs/common';
import { EnvironmentsModule } from '../environments';
import { SecretsModule } from '../secrets';
import { RepoCheckouts } from './repo-checkouts.service';
import { SkillsService } from './skills.service';

/** Skill discovery and resolution, for every role (run creation resolves skill specs). */
@Module({
  imports: [EnvironmentsModule, SecretsModule],
  providers: [RepoCheckouts, SkillsService],
  exports: [SkillsService],
})
export class SkillsModule {}
