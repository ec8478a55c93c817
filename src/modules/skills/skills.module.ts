import { Module } from '@nestjs/common';
import { EnvironmentsModule } from '../environments/environments.module';
import { SecretsModule } from '../secrets/secrets.module';
import { RepoCheckouts } from './repo-checkouts.service';
import { SkillsService } from './skills.service';
import { SkillsController } from './skills.controller';

/** Skill discovery and resolution, for every role (run creation resolves skill specs). */
@Module({
  imports: [EnvironmentsModule, SecretsModule],
  providers: [RepoCheckouts, SkillsService],
  exports: [SkillsService],
})
export class SkillsModule {}

/** `GET /agent` on the API role. */
@Module({ imports: [SkillsModule], controllers: [SkillsController] })
export class SkillsApiModule {}
