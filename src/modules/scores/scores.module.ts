import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RunJudge } from './run-judge.entity';
import { RunScore } from './run-score.entity';
import { ScoresController } from './scores.controller';
import { ScoresService } from './scores.service';

/** Judge runs and their scores (role api); `runs` is the app's RunsModule. */
@Module({})
export class ScoresModule {
  static forRuns(runs: DynamicModule): DynamicModule {
    return {
      module: ScoresModule,
      imports: [TypeOrmModule.forFeature([RunJudge, RunScore]), runs],
      controllers: [ScoresController],
      providers: [ScoresService],
    };
  }
}
