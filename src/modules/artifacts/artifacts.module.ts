import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TeamsModule } from '../teams/teams.module';
import { ArtifactReader } from './artifact-reader.service';
import { ArtifactWriter } from './artifact-writer.service';
import { ArtifactsController, ConversationScreenshotsController } from './artifacts.controller';
import { ArtifactsService } from './artifacts.service';
import { RunArtifact } from './run-artifact.entity';

@Module({
  imports: [TypeOrmModule.forFeature([RunArtifact])],
  providers: [ArtifactsService, ArtifactWriter, ArtifactReader],
  exports: [ArtifactsService, ArtifactWriter],
})
export class ArtifactsModule {}

/** The artifacts API (role api). */
@Module({
  imports: [ArtifactsModule, TeamsModule],
  controllers: [ArtifactsController, ConversationScreenshotsController],
  providers: [ArtifactReader],
})
export class ArtifactsApiModule {}
