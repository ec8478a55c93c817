import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ArtifactWriter } from './artifact-writer.service';
import { ArtifactsService } from './artifacts.service';
import { RunArtifact } from './run-artifact.entity';

@Module({
  imports: [TypeOrmModule.forFeature([RunArtifact])],
  providers: [ArtifactsService, ArtifactWriter],
  exports: [ArtifactsService, ArtifactWriter],
})
export class ArtifactsModule {}
