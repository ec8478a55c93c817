import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { blockRunAsHarnessWould } from './support/blocked-runs';
import { CliResult, runCli } from './support/cli-process';
import { useTestApp } from './support/use-test-app';

/**
 * `runs approvals|approve|deny|answer` as child processes against a real API (api role: a
 * decided run stays QUEUED). Runs are put into BLOCKED as the harness would.
 */
describe('CLI: approval commands', () => {
  const { api, app, env } = useTestApp('approvals_cli', ['api'], {}, { model: false });
  let viewerKey: string;

  beforeAll(async () => {
    const teams = app.ambient.app.get(TeamsService, { strict: false });
    const keys = app.ambient.app.get(ApiKeysService, { strict: false });
    const team = (await teams.findByName('default'))!;
    const viewer = await teams.createUser(team, { displayName: 'Vic', role: 'viewer' });
    viewerKey = (await keys.create(viewer, 'viewer')).key;
  });

  const cli = (args: string[], key = app.apiKey): Promise<CliResult> =>
    runCli(['runs', ...args], {
      ...env.childEnv(),
      AMBIENT_API_URL: app.baseUrl,
      AMBIENT_API_KEY: key,
    });
  const blockedRun = async (requests?: Parameters<typeof blockRunAsHarnessWould>[2]) => {
    const runId = (await api.post('/agent/runs', { prompt: 'Release' })).body.run_id as string;
    return { runId, ids: await blockRunAsHarnessWould(app, runId, requests) };
  };
  /** A refusal: exit `code`, nothing on stdout, the reason as stderr's first line. */
  const expectOneLineError = (result: CliResult, code: number, line: RegExp) => {
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: '' });
    expect(result.stderr.trimEnd().split('\n')[0]).toMatch(line);
  };

  it("lists a run's requests with the call in full, and as JSON", async () => {
    const { runId, ids } = await blockedRun([
      { arguments: { command: 'git push --force origin main' }, summary: 'run `git push`' },
      { kind: 'question', arguments: { question: 'Which tag?' }, summary: 'Which tag?' },
    ]);
    const listed = await cli(['approvals', runId]);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(`${ids[0]}  PENDING  approval  run \`git push\``);
    expect(lines[1]).toBe('    call      run_command {"command":"git push --force origin main"}');
    expect(lines).toContain(`${ids[1]}  PENDING  question  Which tag?`);

    const json = await cli(['approvals', runId, '--json']);
    expect(json.code).toBe(0);
    const answer = JSON.parse(json.stdout) as { approvals: { id: string; decision: null }[] };
    expect(answer.approvals.map((a) => [a.id, a.decision])).toEqual([
      [ids[0], null],
      [ids[1], null],
    ]);
  }, 240_000); // two CLI processes, each compiling TypeScript at start (≈ 5–15 s under load)

  it('approve, deny and answer decide requests and say what became of the run', async () => {
    const first = await blockedRun([{}, { kind: 'question' }]);
    const denied = await cli(['deny', first.runId, first.ids[0], '--comment', 'Not today']);
    expect(denied).toEqual({
      code: 0,
      stdout: `denied ${first.ids[0]}; the run stays BLOCKED: another request of it is still pending\n`,
      stderr: '',
    });
    const answered = await cli(['answer', first.runId, first.ids[1], 'Tag v2.1']);
    expect(answered.stdout).toBe(`answered ${first.ids[1]}; the run is QUEUED and resumes\n`);
    const decided = (await cli(['approvals', first.runId])).stdout;
    expect(decided).toMatch(/ {4}decided {3}deny by Admin at \S+: Not today/);
    expect(decided).toMatch(/ {4}decided {3}answer by Admin at \S+: Tag v2\.1/);

    const second = await blockedRun();
    const approved = await cli(['approve', second.runId, second.ids[0], '--json']);
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      approval: { id: second.ids[0], decision: 'approve' },
      run_state: 'QUEUED',
    });
    expect(await api.runState(second.runId)).toBe('QUEUED');
  }, 240_000); // four CLI processes, each compiling TypeScript at start (≈ 5–15 s under load)

  it('refuses clearly: usage errors exit 2, API refusals exit 1 with the reason', async () => {
    const { runId, ids } = await blockedRun([{}, { kind: 'question' }]);
    const unknownId = '00000000-0000-0000-0000-000000000000';
    // Independent refusals: their processes run side by side.
    const [noComment, noRequest, emptyAnswer, wrongKind, byViewer, unknown, noRun] =
      await Promise.all([
        cli(['deny', runId, ids[0]]),
        cli(['approve', runId]),
        cli(['answer', runId, ids[1], '  ']),
        cli(['approve', runId, ids[1]]),
        cli(['approve', runId, ids[0]], viewerKey),
        cli(['approve', runId, unknownId]),
        cli(['approvals', 'no-such-run']),
      ]);
    expectOneLineError(noComment, 2, /^ambient: missing --comment <value>/);
    expectOneLineError(noRequest, 2, /^ambient: expected <run-id> <request-id>/);
    expectOneLineError(emptyAnswer, 2, /^ambient: <text> must not be empty/);
    expectOneLineError(wrongKind, 1, /^ambient: 400 .*decision: this request is a question/);
    expectOneLineError(
      byViewer,
      1,
      /^ambient: 403 .*role "viewer" lacks permission "approvals\.decide"/,
    );
    expectOneLineError(unknown, 1, new RegExp(`^ambient: 404 .*approval request "${unknownId}"`));
    expectOneLineError(noRun, 1, /^ambient: 404 .*run "no-such-run"/);
    expect((await api.get(`/agent/runs/${runId}/approvals`)).body.approvals).toEqual([
      expect.objectContaining({ decision: null }),
      expect.objectContaining({ decision: null }),
    ]);

    expect((await cli(['approve', runId, ids[0]])).code).toBe(0);
    expectOneLineError(
      await cli(['deny', runId, ids[0], '--comment', 'too late']),
      1,
      new RegExp(`^ambient: 409 .*approval request "${ids[0]}" was already decided \\(approve\\)`),
    );
  }, 240_000); // nine CLI processes, each compiling TypeScript at start (≈ 5–15 s under load)
});
