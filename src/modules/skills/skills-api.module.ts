import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { SkillsController } from './skills.controller';
import { SkillsModule } from './skills.module';

/**
 * `GET /agent` on the API role. Its own file: RunsModule (the skills' last runs) imports
 * SkillsModule, so skills.module.ts cannot import runs.module.ts back.
 */
@Module({ imports: [SkillsModule, RunsModule], controllers: [SkillsController] })
export class SkillsApiModule {}
