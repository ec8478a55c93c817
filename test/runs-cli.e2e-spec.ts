import { CliResult, runCli } from './support/cli-process';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** `runs create|list|get|cancel|followup` as child processes against a real API and worker. */
describe('CLI runs commands', () => {
  const { api, app, env, model } = useTestApp('runs-cli', ['api', 'worker']);

  const cli = (...args: string[]): Promise<CliResult> =>
    runCli(['runs', ...args], {
      ...env.childEnv(),
      AMBIENT_API_URL: app.baseUrl,
      AMBIENT_API_KEY: app.apiKey,
    });

  /** An error: a non-zero code, nothing on stdout and one line on stderr. */
  const expectOneLineError = (result: CliResult, code: number, line: RegExp) => {
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: '' });
    expect(result.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(line)]);
  };

  it('creates a run with a title, metadata and model, and prints its id', async () => {
    model.script('cli-create', [{ text: 'Created.' }]);
    const result = await cli(
      'create',
      '--prompt',
      'From the CLI [script:cli-create]',
      '--title',
      'CLI run',
      '--model',
      'fake-model',
      '--metadata',
      'ticket=T-1',
      '--metadata',
      'query=a=b',
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const runId = result.stdout.trim();
    expect(runId).toMatch(/^\S+$/);
    const run = (await api.get(`/agent/runs/${runId}`)).body;
    expect(run).toMatchObject({
      title: 'CLI run',
      prompt: 'From the CLI [script:cli-create]',
      metadata: { ticket: 'T-1', query: 'a=b' },
      agent_config: { model_id: 'fake-model' },
    });
  });

  it('follows a created run with --watch: 0 when it SUCCEEDS, 3 when it ends FAILED', async () => {
    model.script('cli-watch-ok', [{ text: 'All good.' }]);
    const ok = await cli('create', '--prompt', 'Watch [script:cli-watch-ok]', '--watch');
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const lines = ok.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\S+$/);
    expect(lines.at(-1)).toMatch(/state SUCCEEDED: All good\.$/);

    model.script('cli-watch-fail', [{ status: 401, error: 'invalid api key' }]);
    const failed = await cli('create', '--prompt', 'Fail [script:cli-watch-fail]', '--watch');
    expect(failed.code).toBe(3);
    expect(failed.stdout).toMatch(/state FAILED/);

    model.script('cli-watch-json', [{ text: 'JSON.' }]);
    const json = await cli('create', '--prompt', 'J [script:cli-watch-json]', '--watch', '--json');
    expect(json.code).toBe(0);
    const events = json.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events[0]).toMatchObject({ run_id: expect.any(String), state: expect.any(String) });
    expect(events.at(-1)).toMatchObject({ event: 'run', data: { state: 'SUCCEEDED' } });
  });

  it('refuses bad creates: usage errors exit 2, API refusals exit 1 with one line', async () => {
    const noPrompt = await cli('create');
    expect(noPrompt.code).toBe(2);
    expect(noPrompt.stderr).toMatch(/^ambient: missing --prompt <value>/);
    const badPair = await cli('create', '--prompt', 'x', '--metadata', 'no-equals-sign');
    expect(badPair.code).toBe(2);
    expect(badPair.stderr).toMatch(/^ambient: --metadata must be key=value/);
    const locked = await cli('create', '--prompt', 'x', '--model', 'locked-model');
    expectOneLineError(locked, 1, /^ambient: 400 .*config\.model_id.*locked-model/);
    const unreachable = await runCli(['runs', 'list'], {
      ...env.childEnv(),
      AMBIENT_API_URL: 'http://127.0.0.1:9/api/v1',
      AMBIENT_API_KEY: app.apiKey,
    });
    expectOneLineError(unreachable, 1, /^ambient: cannot reach the API at http:\/\/127\.0\.0\.1:9/);
  });

  it('lists runs with the API filters and a limit, as lines or one JSON answer', async () => {
    const all = await cli('list', '--limit', '50');
    expect(all).toMatchObject({ code: 0, stderr: '' });
    expect(all.stdout.trimEnd().split('\n').length).toBeGreaterThanOrEqual(4);
    expect(all.stdout).toMatch(/^\S+  SUCCEEDED +\S+  fake-model  CLI run$/m);

    const one = await cli('list', '--limit', '1', '--json');
    expect(one.code).toBe(0);
    const page = JSON.parse(one.stdout);
    expect(page.runs).toHaveLength(1);
    expect(page.page_info.has_next_page).toBe(true);
    const paged = await cli('list', '--limit', '1');
    expect(paged.stderr).toMatch(/^more runs: --cursor \S+/);

    const failed = await cli('list', '--state', 'FAILED', '--json');
    const failedRuns = JSON.parse(failed.stdout).runs as { state: string }[];
    expect(failedRuns.length).toBeGreaterThanOrEqual(1);
    expect(failedRuns.every((r) => r.state === 'FAILED')).toBe(true);
    const byMetadata = await cli('list', '--metadata', 'ticket=T-1', '--json');
    expect(JSON.parse(byMetadata.stdout).runs).toEqual([
      expect.objectContaining({ title: 'CLI run' }),
    ]);

    expectOneLineError(await cli('list', '--state', 'SLEEPING'), 1, /^ambient: 400 .*state/);
    expectOneLineError(await cli('list', '--limit', '0'), 1, /^ambient: 400 .*limit/);
  });

  it('gets a run as fields or JSON; an unknown run exits 1', async () => {
    const created = await cli('create', '--prompt', 'Get me', '--metadata', 'k=v');
    const runId = created.stdout.trim();
    const text = await cli('get', runId);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(new RegExp(`^run_id {7}${runId}$`, 'm'));
    expect(text.stdout).toMatch(/^metadata\.k {3}v$/m);
    expect(text.stdout).toMatch(/^link {9}http:\/\/127\.0\.0\.1:\d+\/console\/runs\//m);
    const json = await cli('get', runId, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ run_id: runId, prompt: 'Get me' });
    expectOneLineError(await cli('get', 'no-such-run'), 1, /^ambient: 404 /);
    expect((await cli('get')).code).toBe(2);
  });

  it('cancels a running run once; a second cancel exits 1', async () => {
    model.script('cli-hang', [{ hang: true }]);
    const created = await cli('create', '--prompt', 'Hang [script:cli-hang]');
    const runId = created.stdout.trim();
    await waitFor(
      () => api.runState(runId),
      (state) => state === 'INPROGRESS',
      { what: 'the run to start' },
    );
    const cancelled = await cli('cancel', runId);
    expect(cancelled).toMatchObject({ code: 0, stderr: '', stdout: `${runId}\n` });
    await waitFor(
      () => api.runState(runId),
      (state) => state === 'CANCELLED',
      { what: 'the run to be cancelled' },
    );
    expectOneLineError(await cli('cancel', runId), 1, /^ambient: 4\d\d /);
    expectOneLineError(await cli('cancel', 'no-such-run'), 1, /^ambient: 404 /);
  });

  it('sends a follow-up to an ended run, which continues it', async () => {
    model.script('cli-follow', [{ text: 'First.' }, { text: 'Second.' }]);
    const created = await cli('create', '--prompt', 'Talk [script:cli-follow]', '--watch');
    expect(created.code).toBe(0);
    const runId = created.stdout.split('\n')[0];
    const followup = await cli('followup', runId, '--message', 'And then?', '--json');
    expect(followup).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(followup.stdout)).toMatchObject({ outcome: expect.any(String) });
    await waitFor(
      async () => model.requests.filter((r) => r.script === 'cli-follow').length,
      (count) => count >= 2,
      { what: 'the follow-up to reach the model' },
    );
    const missing = await cli('followup', runId);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^ambient: missing --message <value>/);
    expectOneLineError(await cli('followup', 'no-such-run', '--message', 'x'), 1, /^ambient: 404 /);
  });
});
