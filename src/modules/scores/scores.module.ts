import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RunsModule } from '../runs';
import { RunJudge } from './run-judge.entity';
import { RunScore } from './run-score.entity';
import { ScoresController } from './scores.controller';
import { ScoresRepository } from './scores.repository';
import { ScoresService } from './scores.service';

/** Judge runs and their scores (role api). */
@Module({
  imports: [TypeOrmModule.forFeature([RunJudge, RunScore]), RunsModule],
  controllers: [ScoresController],
  providers: [ScoresService, ScoresRepository],
})
export class ScoresModule {}
