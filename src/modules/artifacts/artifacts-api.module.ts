import { DynamicModule, Module, Type } from '@nestjs/common';
import { TeamsModule } from '../teams';
import { ArtifactReader } from './artifact-reader.service';
import { ArtifactsController, ConversationScreenshotsController } from './artifacts.controller';
import { ArtifactsModule } from './artifacts.module';

/**
 * The artifacts API (role api). Which run a screenshot's conversation holds comes through the
 * ConversationRuns port; the runs module provides it, and since runs imports artifacts, the app
 * passes that module in.
 */
@Module({})
export class ArtifactsApiModule {
  static withRuns(runsModule: Type<unknown>): DynamicModule {
    return {
      module: ArtifactsApiModule,
      imports: [ArtifactsModule, TeamsModule, runsModule],
      controllers: [ArtifactsController, ConversationScreenshotsController],
      providers: [ArtifactReader],
    };
  }
}
