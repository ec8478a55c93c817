import { CliResult, runCli, startCli } from './support/cli-process';
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

  /** `label  value` lines as a map (a value's continuation lines are left out). */
  const fieldLines = (stdout: string) =>
    new Map(
      stdout
        .trimEnd()
        .split('\n')
        .filter((line) => !line.startsWith(' '))
        .map((line) => {
          const [, label, value] = /^(\S+) +(.*)$/.exec(line) ?? [line, line, ''];
          return [label, value] as const;
        }),
    );

  it('gets a run with every line its help promises: error code and message, cost, times', async () => {
    const help = await cli('get', '--help');
    const promised = [
      'run_id',
      'title',
      'state',
      'model',
      'environment',
      'created',
      'started',
      'updated',
      'run_time',
      'error',
      'status',
      'cost',
      'link',
      'metadata.<key>',
    ];
    for (const label of promised) expect(help.stdout).toContain(label);

    model.script('cli-get-ok', [{ text: 'Done here.' }]);
    const ok = await cli(
      'create',
      ...['--prompt', 'Get me [script:cli-get-ok]', '--title', 'Got', '--metadata', 'k=v'],
      '--watch',
    );
    expect(ok.code).toBe(0);
    const okId = ok.stdout.split('\n')[0];
    const okRun = (await api.get(`/agent/runs/${okId}`)).body;
    const text = await cli('get', okId);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    const okFields = fieldLines(text.stdout);
    const usage = okRun.request_usage;
    const total = usage.inference_cost_usd + usage.compute_cost_usd;
    expect(usage.total_tokens).toBeGreaterThan(0);
    expect(okRun).toMatchObject({
      run_time: expect.stringMatching(/^PT/),
      started_at: expect.any(String),
    });
    expect(Object.fromEntries(okFields)).toEqual({
      run_id: okId,
      title: 'Got',
      state: 'SUCCEEDED',
      model: 'fake-model',
      created: okRun.created_at,
      started: okRun.started_at,
      updated: okRun.updated_at,
      run_time: okRun.run_time,
      status: 'Done here.',
      cost:
        `$${total.toFixed(4)} (inference $${usage.inference_cost_usd.toFixed(4)}, ` +
        `compute $${usage.compute_cost_usd.toFixed(4)}, ${usage.total_tokens} tokens)`,
      link: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/console\/runs\//),
      'metadata.k': 'v',
    });

    const environment = await api.post('/agent/environments', {
      name: 'cli-get-broken',
      setup_commands: ['echo "cannot reach registry"; exit 7'],
    });
    const failed = await cli('create', '--prompt', 'x', '--environment', environment.body.uid);
    const failedId = failed.stdout.trim();
    const failedRun = await waitFor(
      async () => (await api.get(`/agent/runs/${failedId}`)).body,
      (run) => run.state === 'FAILED',
      { what: 'the setup to fail' },
    );
    const failedText = await cli('get', failedId);
    expect(failedText).toMatchObject({ code: 0, stderr: '' });
    const failedFields = fieldLines(failedText.stdout);
    expect(failedFields.get('state')).toBe('FAILED');
    expect(failedFields.get('environment')).toBe(environment.body.uid);
    expect(failedFields.has('status')).toBe(false);
    const message = String(failedRun.status_message.message);
    expect(failedFields.get('error')).toBe(
      `environment_setup_failed: ${message.trim().split('\n')[0]}`,
    );
    expect(failedText.stdout).toContain('cannot reach registry');

    const shown = new Set([...okFields.keys(), ...failedFields.keys()]);
    for (const label of promised.filter((l) => l !== 'metadata.<key>')) {
      expect({ label, shown: shown.has(label) }).toEqual({ label, shown: true });
    }

    const json = await cli('get', okId, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      run_id: okId,
      state: 'SUCCEEDED',
      request_usage: usage,
    });
    expectOneLineError(await cli('get', 'no-such-run'), 1, /^ambient: 404 /);
    expect((await cli('get')).code).toBe(2);
  });

  it('exits quietly with 0 when the reader of its output goes away (`| head -1`)', async () => {
    model.script('cli-pipe', [{ hang: true }]);
    const created = await cli('create', '--prompt', 'Pipe [script:cli-pipe]');
    const runId = created.stdout.trim();
    await waitFor(
      () => api.runState(runId),
      (state) => state === 'INPROGRESS',
      { what: 'the run to start' },
    );
    const watcher = startCli(['runs', 'watch', runId], {
      ...env.childEnv(),
      AMBIENT_API_URL: app.baseUrl,
      AMBIENT_API_KEY: app.apiKey,
    });
    // As `head -1` does: read up to the first line, then close the pipe.
    const firstLine = await new Promise<string>((resolve, reject) => {
      let text = '';
      watcher.child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('\n')) {
          watcher.child.stdout.destroy();
          resolve(text.split('\n')[0]);
        }
      });
      void watcher.exited.then(
        ({ code, stderr }) =>
          reject(new Error(`the watcher exited with ${code} before a line: ${stderr}${text}`)),
        reject,
      );
    });
    expect(firstLine).toMatch(/^\d\d:\d\d:\d\d  /);
    // The run's end makes the watcher write again, into the closed pipe.
    expect((await api.post(`/agent/runs/${runId}/cancel`)).status).toBe(200);
    const result = await watcher.exited;
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
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
    const followup = await cli('followup', runId, '--message', 'And then?');
    expect(followup).toMatchObject({ code: 0, stderr: '' });
    expect(followup.stdout).toMatch(
      /^continuing: the ended run starts again with it \(follow-up \S+\)\n$/,
    );
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
