import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ArtifactsService } from './artifacts.service';
import { RunArtifact } from './run-artifact.entity';

@Module({
  imports: [TypeOrmModule.forFeature([RunArtifact])],
  providers: [ArtifactsService],
  exports: [ArtifactsService],
})
export class ArtifactsModule {}
