import { getDataSourceToken } from '@nestjs/typeorm';
import { newTestService } from '../../../test/support/unit/new-test-service';
import { insertRun } from '../../../test/support/unit/run-rows';
import { useTestDatabase } from '../../../test/support/unit/test-database';
import type { RequestUsage } from '../run-config';
import { TeamUserRepository } from '../teams';
import { RunUsageRepository } from './run-usage.repository';

interface UsageRun {
  createdAt: Date;
  usage?: RequestUsage | null;
  teamId?: string;
  modelId?: string | null;
  source?: string;
  creatorId?: string | null;
  executorId?: string | null;
}

const day = (d: number, hour = 12) => new Date(Date.UTC(2025, 5, d, hour));

/** One model entry of request_usage as executions record it. */
function usage(input: number, output: number, inferenceUsd: number, computeUsd = 0): RequestUsage {
  return {
    inference_cost_usd: inferenceUsd,
    compute_cost_usd: computeUsd,
    total_tokens: input + output,
    model_token_usage: [
      {
        model_id: 'm',
        total_tokens: input + output,
        usage_type: 'custom_endpoint',
        tokens_by_category: { input, output },
      },
    ],
  };
}

/** GET /usage's aggregate over the runs table, on a real database. */
describe('RunUsageRepository.usageBuckets (database)', () => {
  const db = useTestDatabase('runusage');
  const otherTeam = 'OtherTeamRunUsageTTTTT';
  let records: RunUsageRepository;

  const run = async (fields: UsageRun): Promise<string> => {
    const id = await insertRun(db.dataSource, db.teamId);
    await db.dataSource.query(
      `UPDATE runs SET team_id = ?, created_at = ?, request_usage = ?, model_id = ?, source = ?,
         creator_id = ?, executor_id = ? WHERE id = ?`,
      [
        fields.teamId ?? db.teamId,
        fields.createdAt,
        fields.usage ? JSON.stringify(fields.usage) : null,
        fields.modelId ?? 'model-a',
        fields.source ?? 'API',
        fields.creatorId === undefined ? 'CreatorA' : fields.creatorId,
        fields.executorId ?? 'IdentityA',
        id,
      ],
    );
    return id;
  };

  beforeAll(async () => {
    records = (
      await newTestService(RunUsageRepository, [
        { provide: getDataSourceToken(), useValue: db.dataSource },
        TeamUserRepository,
      ])
    ).sut;
    // Two executions on two models in one run: its tokens add up, the run counts once.
    const twoModels = usage(100, 10, 0.5, 0.25);
    twoModels.model_token_usage!.push({
      model_id: 'n',
      total_tokens: 7,
      usage_type: 'custom_endpoint',
      tokens_by_category: { input: 4, output: 3 },
    });
    await run({ createdAt: day(2, 0), usage: twoModels });
    await run({ createdAt: day(2, 23), usage: usage(20, 2, 0.1), modelId: 'model-b' });
    await run({ createdAt: day(3), usage: null, source: 'SCHEDULED_AGENT', creatorId: null });
    await run({ createdAt: day(5), usage: usage(1, 1, 2), executorId: 'IdentityB' });
    await run({ createdAt: day(5), usage: usage(1000, 1000, 9), teamId: otherTeam });
    await run({ createdAt: day(9), usage: usage(1, 1, 100) }); // after the range below
    // Names come from the team's users (an agent identity is one); IdentityB's is another team's.
    await db.dataSource.query(
      `INSERT INTO teams (id, name, created_at) VALUES (?, 'usage other team', NOW(3))`,
      [otherTeam],
    );
    for (const [id, name, teamId] of [
      ['CreatorA', 'Ada', db.teamId],
      ['IdentityA', 'Agent A', db.teamId],
      ['IdentityB', 'Not ours', otherTeam],
    ]) {
      await db.dataSource.query(
        `INSERT INTO users (id, team_id, display_name, created_at) VALUES (?, ?, ?, NOW(3))`,
        [id, teamId, name],
      );
    }
  });

  const range = (groupBy: Parameters<RunUsageRepository['usageBuckets']>[3], to = day(9, 0)) =>
    records.usageBuckets(db.teamId, day(1), to, groupBy);

  it('buckets by UTC day in day order, leaving out days without runs', async () => {
    expect(await range('day')).toEqual([
      {
        key: '2025-06-02',
        name: null,
        runs: 2,
        promptTokens: 124,
        completionTokens: 15,
        costUsd: 0.85,
      },
      { key: '2025-06-03', name: null, runs: 1, promptTokens: 0, completionTokens: 0, costUsd: 0 },
      { key: '2025-06-05', name: null, runs: 1, promptTokens: 1, completionTokens: 1, costUsd: 2 },
    ]);
  });

  it('orders the other groupings by cost, the most expensive first', async () => {
    expect((await range('model')).map((b) => [b.key, b.runs, b.costUsd])).toEqual([
      ['model-a', 3, 2.75],
      ['model-b', 1, 0.1],
    ]);
    expect((await range('identity')).map((b) => [b.key, b.name, b.costUsd])).toEqual([
      ['IdentityB', null, 2],
      ['IdentityA', 'Agent A', 0.85],
    ]);
    expect((await range('source')).map((b) => [b.key, b.runs])).toEqual([
      ['API', 3],
      ['SCHEDULED_AGENT', 1],
    ]);
    expect((await range('creator')).map((b) => [b.key, b.name, b.runs])).toEqual([
      ['CreatorA', 'Ada', 3],
      [null, null, 1],
    ]);
  });

  it('counts runs created from `from` up to but not including `to`', async () => {
    const edge = await range('day', day(9, 12));
    expect(edge.map((b) => b.key)).toEqual(['2025-06-02', '2025-06-03', '2025-06-05']);
    const through = await range('day', new Date(day(9, 12).getTime() + 1));
    expect(through.at(-1)).toMatchObject({ key: '2025-06-09', costUsd: 100 });
    expect(await records.usageBuckets(db.teamId, day(6), day(7), 'model')).toEqual([]);
  });
});
