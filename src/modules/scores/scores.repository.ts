import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { RunJudge } from './run-judge.entity';
import { RunScore } from './run-score.entity';
import type { Verdict } from './verdict';

/** Judge runs (`run_judges`) and the scores they report (`run_scores`). */
@Injectable()
export class ScoresRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async addJudge(judge: RunJudge): Promise<void> {
    await this.dataSource.getRepository(RunJudge).insert(judge);
  }

  /** The judge record of a judge run, if that run is one. */
  judgeOf(judgeRunId: string): Promise<RunJudge | null> {
    return this.dataSource.getRepository(RunJudge).findOneBy({ judgeRunId });
  }

  /** Stores scores in the caller's transaction. */
  async addScores(
    manager: EntityManager,
    scores: (Verdict & Omit<RunScore, 'id' | keyof Verdict>)[],
  ): Promise<void> {
    await manager.getRepository(RunScore).insert(scores);
  }

  /** The scores of a run of the team, most recent first. */
  scoresOf(teamId: string, targetRunId: string): Promise<RunScore[]> {
    return this.dataSource
      .getRepository(RunScore)
      .find({ where: { targetRunId, teamId }, order: { id: 'DESC' } });
  }
}
