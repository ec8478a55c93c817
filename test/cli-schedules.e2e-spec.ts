import { CliResult, runCli } from './support/cli-process';
import { useTestApp } from './support/use-test-app';
import { createFactory, createWebhook } from './support/webhook-helpers';

/** `schedules …` and `--json` on every read command, as child processes against a real API. */
describe('CLI schedules and --json', () => {
  const { api, app, env } = useTestApp('cli-schedules', ['api']);

  const cli = (...args: string[]): Promise<CliResult> =>
    runCli(args, { ...env.childEnv(), AMBIENT_API_URL: app.baseUrl, AMBIENT_API_KEY: app.apiKey });

  /** `label  value` lines as an object. */
  const fields = (stdout: string) =>
    Object.fromEntries(
      stdout
        .trimEnd()
        .split('\n')
        .map((line) => /^(\S+) +(.*)$/.exec(line)?.slice(1) ?? [line, '']),
    );

  it('creates, lists, gets, updates, pauses, resumes and deletes a scheduled agent', async () => {
    const help = await cli('schedules', '--help');
    expect(help.code).toBe(0);
    for (const verb of ['list', 'get', 'create', 'update', 'delete', 'pause', 'resume']) {
      expect(help.stdout).toContain(`schedules ${verb}`);
    }

    const created = await cli(
      'schedules',
      'create',
      ...['--name', 'Nightly review', '--cron', '0 3 * * *', '--prompt', 'Review the code'],
      ...['--model', 'fake-model', '--metadata', 'team=ops'],
    );
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const id = created.stdout.trim();
    const stored = (await api.get(`/agent/schedules/${id}`)).body;
    expect(stored).toMatchObject({
      name: 'Nightly review',
      cron_schedule: '0 3 * * *',
      enabled: true,
      prompt: 'Review the code',
      agent_config: { model_id: 'fake-model' },
      metadata: { team: 'ops' },
    });

    const listed = await cli('schedules', 'list');
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(listed.stdout).toBe(
      `${id}  enabled  0 3 * * *  ${stored.history.next_run}  Nightly review\n`,
    );

    const got = await cli('schedules', 'get', id);
    expect(got).toMatchObject({ code: 0, stderr: '' });
    expect(fields(got.stdout)).toEqual({
      id,
      name: 'Nightly review',
      cron: '0 3 * * *',
      enabled: 'yes',
      next_run: stored.history.next_run,
      model: 'fake-model',
      prompt: 'Review the code',
      created: stored.created_at,
      updated: stored.updated_at,
      'metadata.team': 'ops',
    });

    const updated = await cli('schedules', 'update', id, '--cron', '0 4 * * *', '--name', 'Early');
    expect(updated).toMatchObject({ code: 0, stderr: '' });
    expect(fields(updated.stdout)).toMatchObject({ name: 'Early', cron: '0 4 * * *' });
    expect((await api.get(`/agent/schedules/${id}`)).body).toMatchObject({
      name: 'Early',
      cron_schedule: '0 4 * * *',
      enabled: true,
      prompt: 'Review the code',
      agent_config: { model_id: 'fake-model' },
      metadata: { team: 'ops' },
    });

    const nothing = await cli('schedules', 'update', id);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/^ambient: nothing to change/);
    const badCron = await cli('schedules', 'update', id, '--cron', 'every day');
    expect({ code: badCron.code, stdout: badCron.stdout }).toEqual({ code: 1, stdout: '' });
    expect(badCron.stderr).toMatch(/^ambient: 400 .*cron_schedule/);
    expect((await api.get(`/agent/schedules/${id}`)).body.cron_schedule).toBe('0 4 * * *');

    const paused = await cli('schedules', 'pause', id);
    expect(paused).toMatchObject({ code: 0, stderr: '' });
    expect(fields(paused.stdout)).toMatchObject({ enabled: 'no (paused)' });
    expect(fields(paused.stdout).next_run).toBeUndefined();
    expect((await api.get(`/agent/schedules/${id}`)).body).toMatchObject({
      enabled: false,
      history: { next_run: null },
    });
    expect((await cli('schedules', 'list')).stdout).toMatch(new RegExp(`^${id}  paused   0 4`));

    const resumed = await cli('schedules', 'resume', id, '--json');
    expect(resumed).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(resumed.stdout)).toMatchObject({ id, enabled: true });
    expect((await api.get(`/agent/schedules/${id}`)).body.history.next_run).not.toBeNull();

    const deleted = await cli('schedules', 'delete', id);
    expect(deleted).toMatchObject({ code: 0, stderr: '', stdout: `${id}\n` });
    expect((await api.get(`/agent/schedules/${id}`)).status).toBe(404);
    const gone = await cli('schedules', 'get', id);
    expect({ code: gone.code, stdout: gone.stdout }).toEqual({ code: 1, stdout: '' });
    expect(gone.stderr).toMatch(/^ambient: 404 /);

    const incomplete = await cli('schedules', 'create', '--prompt', 'x');
    expect(incomplete.code).toBe(1);
    expect(incomplete.stderr).toMatch(/^ambient: 400 .*name.*cron_schedule/);
    expect((await api.get('/agent/schedules')).body.schedules).toEqual([]);
  });

  it('prints the API answer as one JSON line with --json on every read command', async () => {
    const run = (await api.post('/agent/runs', { prompt: 'Listed' })).body;
    const environment = (await api.post('/agent/environments', { name: 'json-env' })).body;
    const factory = await createFactory(api, 'Json');
    const webhook = await createWebhook(api, factory, { name: 'json-hook' });
    expect(
      (await api.post('/secrets', { name: 'JSON_SECRET', value: 'v-0123456789' })).status,
    ).toBe(201);
    const schedule = (
      await api.post('/agent/schedules', { name: 'J', cron_schedule: '@daily', prompt: 'x' })
    ).body;
    const agent = (await api.post('/agent/identities', { name: 'Json agent' })).body;
    const agentKey = (await api.post(`/agent/identities/${agent.uid}/api-keys`, { name: 'k' }))
      .body;

    const reads: [string[], (answer: Record<string, unknown>) => void][] = [
      [
        ['runs', 'list'],
        (a) => expect(a.runs).toContainEqual(expect.objectContaining({ run_id: run.run_id })),
      ],
      [['runs', 'get', run.run_id], (a) => expect(a.run_id).toBe(run.run_id)],
      [
        ['environments', 'list'],
        (a) =>
          expect(a.environments).toContainEqual(expect.objectContaining({ uid: environment.uid })),
      ],
      [
        ['environments', 'get', '--uid', environment.uid],
        (a) => expect(a.uid).toBe(environment.uid),
      ],
      [['environments', 'pending'], (a) => expect(a).toBeInstanceOf(Object)],
      [
        ['factories', 'list'],
        (a) => expect(a.factories).toContainEqual(expect.objectContaining({ uid: factory })),
      ],
      [['factories', 'show', '--factory', factory], (a) => expect(a.uid).toBe(factory)],
      [
        ['webhooks', 'list', '--factory', factory],
        (a) => expect(a.webhooks).toContainEqual(expect.objectContaining({ uid: webhook.uid })),
      ],
      [
        ['webhooks', 'deliveries', '--factory', factory, '--webhook', webhook.uid],
        (a) => expect(a.deliveries).toEqual([]),
      ],
      [
        ['secrets', 'list'],
        (a) => expect(a.secrets).toContainEqual(expect.objectContaining({ name: 'JSON_SECRET' })),
      ],
      [
        ['schedules', 'list'],
        (a) => expect(a.schedules).toContainEqual(expect.objectContaining({ id: schedule.id })),
      ],
      [['schedules', 'get', schedule.id], (a) => expect(a.id).toBe(schedule.id)],
      [
        ['api-keys', 'list', '--team', 'default'],
        (a) =>
          expect(a.api_keys).toContainEqual(
            expect.objectContaining({ role: 'admin', prefix: expect.any(String) }),
          ),
      ],
      [
        ['identities', 'list', '--team', 'default'],
        (a) =>
          expect(a.agents).toContainEqual(
            expect.objectContaining({ uid: agent.uid, name: 'Json agent', available: true }),
          ),
      ],
      [
        ['identity-keys', 'list', '--identity', agent.uid],
        (a) =>
          expect(a.api_keys).toEqual([expect.objectContaining({ id: agentKey.id, name: 'k' })]),
      ],
    ];
    const results = await Promise.all(reads.map(([args]) => cli(...args, '--json')));
    results.forEach((result, i) => {
      const args = reads[i][0].join(' ');
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({
        args,
        code: 0,
        stderr: '',
      });
      const lines = result.stdout.trimEnd().split('\n');
      expect({ args, lines: lines.length }).toEqual({ args, lines: 1 });
      reads[i][1](JSON.parse(lines[0]) as Record<string, unknown>);
    });
  }, 240_000); // fifteen CLI processes, each compiling TypeScript at start
});
