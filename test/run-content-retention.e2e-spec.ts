import { RunContentRetentionSweeper } from '../src/modules/retention';
import { ConversationRunRepository } from '../src/modules/runs/conversation-run.repository';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface RunBody {
  run_id: string;
  conversation_id: string;
  state: string;
  request_usage?: unknown;
  artifacts: { artifact_type: string; data: Record<string, unknown> }[];
}

const issueUrl = (n: number) => `https://linear.app/acme/issue/ENG-${n}`;

/**
 * AMBIENT_RUN_CONTENT_RETENTION_DAYS through the API: a run ended past it keeps its record and
 * links and answers 404 (saying why) for its conversation, timeline, transcript and stored
 * artifacts, and takes no follow-up; a run ended within it is untouched.
 */
describe('run content retention (api + worker, fake model server)', () => {
  const { model, app, api } = useTestApp('content_retention', ['api', 'worker'], {
    'runs.contentRetentionDays': 7,
  });

  const finishedRun = async (script: string): Promise<RunBody> => {
    const runId = (await api.post('/agent/runs', { prompt: `Report [script:${script}]` })).body
      .run_id as string;
    return waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body as RunBody,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR'].includes(run.state),
      { what: `run ${runId} to finish` },
    );
  };
  const endedDaysAgo = (runId: string, days: number) =>
    app.dataSource.query(
      'UPDATE runs SET finished_at = DATE_SUB(UTC_TIMESTAMP(3), INTERVAL ? DAY) WHERE id = ?',
      [days, runId],
    );
  const planUid = (run: RunBody) =>
    String(run.artifacts.find((a) => a.artifact_type === 'PLAN')!.data.artifact_uid);

  let old: RunBody;
  let recent: RunBody;

  beforeAll(async () => {
    const reporting = (issue: number) => [
      {
        toolCalls: [
          {
            name: 'report_artifact',
            arguments: { artifact_type: 'PLAN', title: 'Plan', content: '# Plan\n\n1. Do it' },
          },
          {
            name: 'report_artifact',
            arguments: {
              artifact_type: 'EXTERNAL_REFERENCE',
              reference_type: 'linear_issue',
              url: issueUrl(issue),
              title: `ENG-${issue}`,
            },
          },
        ],
      },
      { text: 'Reported.' },
    ];
    model.script('old', reporting(7));
    model.script('recent', reporting(8));
    old = await finishedRun('old');
    recent = await finishedRun('recent');
    expect([old.state, recent.state]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect((await api.get(`/agent/runs/${old.run_id}/conversation`)).status).toBe(200);
    expect((await api.get(`/agent/artifacts/${planUid(old)}`)).status).toBe(200);
    await endedDaysAgo(old.run_id, 8);
    await endedDaysAgo(recent.run_id, 6);
    await app.ambient.app.get(RunContentRetentionSweeper, { strict: false }).sweepNow();
  });

  it("keeps the run's record, usage and links past the retention", async () => {
    const res = await api.get(`/agent/runs/${old.run_id}`);
    expect(res.status).toBe(200);
    const after = res.body as RunBody;
    expect(after.state).toBe('SUCCEEDED');
    expect(after.request_usage).toEqual(old.request_usage);
    expect(after.artifacts.map((a) => a.artifact_type)).toEqual(['EXTERNAL_REFERENCE']);
    const listed = await api.get('/agent/runs?limit=50');
    expect(listed.body.runs.map((r: RunBody) => r.run_id)).toContain(old.run_id);
    const byUrl = await api.get(
      `/agent/run-by-external-reference?url=${encodeURIComponent(issueUrl(7))}`,
    );
    expect(byUrl.body).toEqual({ run_id: old.run_id });
  });

  it('answers 404 for the content it deleted, saying when and why', async () => {
    for (const path of ['conversation', 'timeline', 'transcript']) {
      const res = await api.get(`/agent/runs/${old.run_id}/${path}`).redirects(0);
      expect([path, res.status]).toEqual([path, 404]);
      expect(res.body.detail).toMatch(/deleted at .* by the content retention/);
      expect(res.body.title).toBe('Run content deleted');
    }
    expect((await api.get(`/agent/artifacts/${planUid(old)}`)).status).toBe(404);
  });

  it('refuses a follow-up or a judge to a run whose conversation is gone, and leaves it ended', async () => {
    const res = await api.post(`/agent/runs/${old.run_id}/followups`, { message: 'and now?' });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ status: 409, retryable: false });
    expect(res.body.detail).toMatch(/content retention/);
    expect(await api.runState(old.run_id)).toBe('SUCCEEDED');
    const judge = await api.post(`/agent/runs/${old.run_id}/judges`, { prompt: 'Score it.' });
    expect(judge.status).toBe(409);
    expect(judge.body.detail).toMatch(/nothing to score/);
  });

  it('refuses a new run in the deleted conversation', async () => {
    const res = await api.post('/agent/runs', {
      prompt: 'Go on [script:recent]',
      conversation_id: old.conversation_id,
    });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/^conversation_id: .*content retention/);
  });

  it('refuses a new run in a conversation the retention deleted while the run was being created', async () => {
    model.script('racing', [{ text: 'Done.' }]);
    const racing = await finishedRun('racing');
    await endedDaysAgo(racing.run_id, 8);
    const conversations = app.ambient.app.get(ConversationRunRepository, { strict: false });
    const sweeper = app.ambient.app.get(RunContentRetentionSweeper, { strict: false });
    const runsOf = conversations.runsOf.bind(conversations);
    // The creation's check finds the conversation whole; the sweep deletes it right after.
    const spy = jest
      .spyOn(conversations, 'runsOf')
      .mockImplementationOnce(async (conversationId) => {
        const runs = await runsOf(conversationId);
        await sweeper.sweepNow();
        return runs;
      });
    try {
      const res = await api.post('/agent/runs', {
        prompt: 'Go on [script:racing]',
        conversation_id: racing.conversation_id,
      });
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/^conversation_id: .*content retention/);
    } finally {
      spy.mockRestore();
    }
    const runs = (await app.dataSource.query('SELECT id FROM runs WHERE conversation_id = ?', [
      racing.conversation_id,
    ])) as { id: string }[];
    expect(runs.map((run) => run.id)).toEqual([racing.run_id]);
  });

  it('leaves a run that ended within the retention whole', async () => {
    expect((await api.get(`/agent/runs/${recent.run_id}/conversation`)).status).toBe(200);
    const timeline = await api.get(`/agent/runs/${recent.run_id}/timeline`);
    expect(timeline.body.events.length).toBeGreaterThan(0);
    expect((await api.get(`/agent/artifacts/${planUid(recent)}`)).status).toBe(200);
    const download = await api.get(`/agent/artifacts/${planUid(recent)}/download`).redirects(0);
    expect(download.status).toBe(302);
  });
});
