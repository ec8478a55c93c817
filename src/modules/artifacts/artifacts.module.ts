import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ArtifactWriter } from './artifact-writer.service';
import { RunArtifact } from './run-artifact.entity';
import { RunArtifactRepository } from './run-artifact.repository';

@Module({
  imports: [TypeOrmModule.forFeature([RunArtifact])],
  providers: [RunArtifactRepository, ArtifactWriter],
  exports: [RunArtifactRepository, ArtifactWriter],
})
export class ArtifactsModule {}
