import { DynamicModule, Module, Type } from '@nestjs/common';
import { SkillsController } from './skills.controller';
import { SkillsModule } from './skills.module';

/**
 * `GET /agent` on the API role. The skills' last runs come through the SkillLastRuns port; the
 * runs module provides it, and since runs imports skills, the app passes that module in.
 */
@Module({})
export class SkillsApiModule {
  static withRuns(runsModule: Type<unknown>): DynamicModule {
    return {
      module: SkillsApiModule,
      imports: [SkillsModule, runsModule],
      controllers: [SkillsController],
    };
  }
}
