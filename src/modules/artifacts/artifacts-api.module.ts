import { Module } from '@nestjs/common';
import { RunsModule } from '../runs/runs.module';
import { TeamsModule } from '../teams/teams.module';
import { ArtifactReader } from './artifact-reader.service';
import { ArtifactsController, ConversationScreenshotsController } from './artifacts.controller';
import { ArtifactsModule } from './artifacts.module';

/**
 * The artifacts API (role api). Its own file: RunsModule (which run a screenshot's conversation
 * holds) imports ArtifactsModule, so artifacts.module.ts cannot import runs.module.ts back.
 */
@Module({
  imports: [ArtifactsModule, TeamsModule, RunsModule],
  controllers: [ArtifactsController, ConversationScreenshotsController],
  providers: [ArtifactReader],
})
export class ArtifactsApiModule {}
