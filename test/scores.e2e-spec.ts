import { apiClient } from './support/api-client';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** A judge run reports verdicts about another run with its run-scoped key, from a command. */
describe('scores reported by a judge run', () => {
  let targetId: string;
  let otherRunId: string;
  let judgeId: string;
  let outputs: string[];

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish` },
    );

  /** A curl command that prints the response body, then "HTTP <status>". */
  const curl = (method: string, path: string, body?: unknown) =>
    `curl -sS -X ${method} "$AMBIENT_API_URL${path}" -H "Authorization: Bearer $AMBIENT_RUN_KEY"` +
    (body ? ` -H "Content-Type: application/json" -d '${JSON.stringify(body)}'` : '') +
    ` -w '\\nHTTP %{http_code}'`;

  const { model, app, api } = useTestApp('scores', ['api', 'worker']);

  beforeAll(async () => {
    targetId = (await api.post('/agent/runs', { prompt: 'Write a haiku' })).body.run_id;
    otherRunId = (await api.post('/agent/runs', { prompt: 'Another task' })).body.run_id;
    await finished(targetId);
    await finished(otherRunId);

    const verdicts = [
      { criterion: 'correctness', score: 0.9, classification: 'pass' },
      { criterion: 'style', score: 7 },
      { criterion: '', classification: 'fail' },
      { criterion: 'tests', classification: 'fail', reason: 'no tests' },
    ];
    model.script('judge', [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: curl('POST', `/agent/runs/${targetId}/scores`, { verdicts }) },
          },
          {
            name: 'run_command',
            arguments: {
              command: curl('POST', `/agent/runs/${otherRunId}/scores`, {
                verdicts: [{ criterion: 'x', score: 1 }],
              }),
            },
          },
          {
            name: 'run_command',
            arguments: {
              command: curl('POST', `/agent/runs/${targetId}/scores`, { verdicts: [] }),
            },
          },
          { name: 'run_command', arguments: { command: 'printf %s "$AMBIENT_RUN_KEY"' } },
        ],
      },
      { text: 'Scored.' },
    ]);
    const dispatched = await api.post(`/agent/runs/${targetId}/judges`, {
      prompt: 'Judge the haiku. [script:judge]',
    });
    expect(dispatched.status).toBe(200);
    expect(dispatched.body).toMatchObject({ target_run_id: targetId, state: 'QUEUED' });
    judgeId = dispatched.body.run_id;
    const judge = await finished(judgeId);
    expect(judge.state).toBe('SUCCEEDED');
    expect(judge.source).toBe('RUN_SCORER');
    outputs = model.requests
      .filter((r) => r.script === 'judge')
      .at(-1)!
      .body.messages.filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(String(m.content)).output as string);
  });

  const response = (output: string) => {
    const [body, status] = output.split('\nHTTP ');
    return { status: Number(status), body: JSON.parse(body) };
  };

  it('accepts the valid verdicts and says why each invalid one was refused', () => {
    const { status, body } = response(outputs[0]);
    expect(status).toBe(200);
    expect(body).toEqual({
      run_id: targetId,
      accepted_count: 2,
      rejected_count: 2,
      results: [
        { index: 0, accepted: true, criterion: 'correctness' },
        {
          index: 1,
          accepted: false,
          criterion: 'style',
          error: 'score: must be a number from 0 to 1',
        },
        { index: 2, accepted: false, criterion: '', error: expect.stringContaining('criterion:') },
        { index: 3, accepted: true, criterion: 'tests' },
      ],
    });
  });

  it('stores the accepted verdicts, most recent first', async () => {
    const res = await api.get(`/agent/runs/${targetId}/scores`);
    expect(res.status).toBe(200);
    expect(res.body.scores).toEqual([
      {
        criterion: 'tests',
        score: null,
        classification: 'fail',
        reason: 'no tests',
        judge_run_id: judgeId,
        created_at: expect.any(String),
      },
      {
        criterion: 'correctness',
        score: 0.9,
        classification: 'pass',
        reason: null,
        judge_run_id: judgeId,
        created_at: expect.any(String),
      },
    ]);
    expect((await api.get(`/agent/runs/${otherRunId}/scores`)).body.scores).toEqual([]);
  });

  it("refuses a judge's key for a run it does not judge (403) and an empty list (400)", () => {
    const other = response(outputs[1]);
    expect(other.status).toBe(403);
    expect(other.body.detail).toContain(`not the key of a judge of run ${otherRunId}`);
    const empty = response(outputs[2]);
    expect(empty.status).toBe(400);
    expect(empty.body.detail).toContain('verdicts');
  });

  it('refuses keys that are not a live judge execution', async () => {
    const verdicts = { verdicts: [{ criterion: 'late', score: 0.1 }] };
    const teamKey = await api.post(`/agent/runs/${targetId}/scores`, verdicts);
    expect(teamKey.status).toBe(403);

    const judgeKey = outputs[3];
    expect(judgeKey).toMatch(/\S{20,}/);
    const afterEnd = await apiClient(app.baseUrl, judgeKey).post(
      `/agent/runs/${targetId}/scores`,
      verdicts,
    );
    expect([401, 403]).toContain(afterEnd.status);
    expect((await api.get(`/agent/runs/${targetId}/scores`)).body.scores).toHaveLength(2);
  });

  it('404s a judge for an unknown run and 400s a judge without a prompt', async () => {
    expect((await api.post('/agent/runs/nope/judges', { prompt: 'x' })).status).toBe(404);
    const missing = await api.post(`/agent/runs/${targetId}/judges`, {});
    expect(missing.status).toBe(400);
    expect(missing.body.detail).toContain('prompt');
  });
});
