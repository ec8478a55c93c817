import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { bareRepo, pushFiles } from './support/git-repos';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/**
 * Environment snapshots on the bubblewrap backend (the e2e default): setup is done once per
 * environment config and repository commits, per team.
 */
describe('environment snapshots: setup done once', () => {
  const gitRoot = mkdtempSync(join(tmpdir(), 'ambient-git-'));
  let them: ReturnType<typeof apiClient>;
  let theirTeamId: string;

  beforeAll(() => {
    bareRepo(gitRoot, 'acme', 'widgets', { 'README.md': 'widgets\n' });
  });
  afterAll(() => rmSync(gitRoot, { recursive: true, force: true }));

  const { env, app, api } = useTestApp('env-snapshots', ['api', 'worker'], {
    'environments.gitUrlBase': gitRoot,
  });

  beforeAll(async () => {
    const teams = app.ambient.app.get(TeamsService);
    const other = await teams.createTeam('guests');
    theirTeamId = other.id;
    const admin = await teams.createUser(other, { displayName: 'Guest', role: 'admin' });
    them = apiClient(
      app.baseUrl,
      (await app.ambient.app.get(ApiKeysService).create(admin, 't')).key,
    );
  });

  const finished = async (runId: string, client = api) =>
    waitFor(
      async () => (await client.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish` },
    );
  const eventTypes = async (runId: string, client = api): Promise<string[]> =>
    (await client.get(`/agent/runs/${runId}/timeline`)).body.events.map(
      (e: { event_type: string }) => e.event_type,
    );
  /** Runs the environment to its end; its id, timeline and what setup wrote in its workspace. */
  const runIn = async (environmentId: string, client = api) => {
    const created = await client.post('/agent/runs', {
      prompt: 'go',
      config: { environment_id: environmentId },
    });
    expect(created.status).toBe(200);
    const done = await finished(created.body.run_id, client);
    expect(done.state).toBe('SUCCEEDED');
    const dir = join(env.workspaceRoot, done.run_id);
    return {
      id: done.run_id as string,
      types: await eventTypes(done.run_id, client),
      // Each setup appends the id of the run it ran in.
      setupRanIn: readFileSync(join(dir, 'setup-runs.txt'), 'utf8').trim().split('\n'),
      readme: readFileSync(join(dir, 'widgets', 'README.md'), 'utf8'),
    };
  };
  const SETUP = 'echo "$AMBIENT_RUN_ID" >> setup-runs.txt';

  it('sets up once, starts the next run from the snapshot, and sets up again on a config change', async () => {
    const environment = await api.post('/agent/environments', {
      name: 'widgets',
      github_repos: [{ owner: 'acme', repo: 'widgets' }],
      setup_commands: [SETUP],
    });
    const uid = environment.body.uid;

    const first = await runIn(uid);
    expect(first.types).toEqual(
      expect.arrayContaining(['environment_setup_started', 'setup_command_succeeded']),
    );
    expect(first.types).not.toContain('setup_cached');
    expect(first.setupRanIn).toEqual([first.id]);

    const second = await runIn(uid);
    expect(second.types).toContain('setup_cached');
    expect(second.types).not.toContain('environment_setup_started');
    expect(second.types).not.toContain('setup_command_succeeded');
    expect(second.types.indexOf('setup_cached')).toBeLessThan(
      second.types.indexOf('worker_container_ready'),
    );
    // The file setup wrote in the first run, and setup did not run in this one.
    expect(second.setupRanIn).toEqual([first.id]);
    expect(second.readme).toBe('widgets\n');

    const changed = await api.patch(`/agent/environments/${uid}`, {
      setup_commands: [SETUP, 'true'],
    });
    expect(changed.status).toBe(200);
    const third = await runIn(uid);
    expect(third.types).not.toContain('setup_cached');
    expect(third.setupRanIn).toEqual([third.id]);
    // The old config's snapshot is gone, the new one replaced it.
    const team = readdirSync(join(env.workspaceRoot, '.snapshots'));
    expect(team).toHaveLength(1);
    const envDirs = readdirSync(join(env.workspaceRoot, '.snapshots', team[0]));
    const keys = envDirs.flatMap((e) =>
      readdirSync(join(env.workspaceRoot, '.snapshots', team[0], e)),
    );
    expect(keys).toHaveLength(1);
    expect((await runIn(uid)).setupRanIn).toEqual([third.id]);
  });

  it('sets up again when a new commit is pushed to a repository', async () => {
    const environment = await api.post('/agent/environments', {
      name: 'pushed',
      github_repos: [{ owner: 'acme', repo: 'widgets' }],
      setup_commands: [SETUP],
    });
    const uid = environment.body.uid;
    const first = await runIn(uid);
    expect((await runIn(uid)).types).toContain('setup_cached');

    pushFiles(gitRoot, 'acme', 'widgets', { 'README.md': 'widgets v2\n' });
    const afterPush = await runIn(uid);
    expect(afterPush.types).not.toContain('setup_cached');
    expect(afterPush.types).toContain('repository_cloned');
    expect(afterPush.setupRanIn).toEqual([afterPush.id]);
    expect(afterPush.readme).toBe('widgets v2\n');
    expect(afterPush.id).not.toBe(first.id);

    const next = await runIn(uid);
    expect(next.types).toContain('setup_cached');
    expect(next.setupRanIn).toEqual([afterPush.id]);
  });

  it("never restores one team's snapshot into another team's run", async () => {
    const environment = await api.post('/agent/environments', {
      name: 'shared',
      github_repos: [{ owner: 'acme', repo: 'widgets' }],
      setup_commands: [SETUP],
    });
    const uid = environment.body.uid;
    await runIn(uid);
    expect((await runIn(uid)).types).toContain('setup_cached');

    // The same environment, used by another team (granted), and another team's own copy of it.
    expect(
      (await api.post(`/agent/environments/${uid}/grants`, { team_id: theirTeamId })).status,
    ).toBe(204);
    expect((await them.post(`/agent/environments/${uid}/accept`, { version: 1 })).status).toBe(200);
    const theirs = await runIn(uid, them);
    expect(theirs.types).not.toContain('setup_cached');
    expect(theirs.setupRanIn).toEqual([theirs.id]);

    const ownCopy = await them.post('/agent/environments', {
      name: 'shared',
      github_repos: [{ owner: 'acme', repo: 'widgets' }],
      setup_commands: [SETUP],
    });
    const copied = await runIn(ownCopy.body.uid, them);
    expect(copied.types).not.toContain('setup_cached');
    expect(copied.setupRanIn).toEqual([copied.id]);
  });
});

const DOCKER_IMAGE = 'ambient-agent:bookworm';
const dockerImagePresent = (() => {
  try {
    execFileSync('docker', ['image', 'inspect', DOCKER_IMAGE], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/** The snapshot images of an environment (tags), from the daemon. */
const snapshotImagesOf = (environmentId: string): string[] =>
  execFileSync(
    'docker',
    [
      'images',
      '--filter',
      `label=dev.ambient.environment-id=${environmentId}`,
      '--format',
      '{{.Repository}}:{{.Tag}}',
    ],
    { encoding: 'utf8' },
  )
    .split('\n')
    .filter(Boolean);

/**
 * On docker a snapshot is the workspace and a `docker commit` of the prepared container: the next
 * run's container is made from that image, so what setup wrote outside the workspace (in $HOME)
 * is there without setup running again; a config change removes the image and sets up anew.
 */
(dockerImagePresent ? describe : describe.skip)('environment snapshots on docker', () => {
  const { api, model } = useTestApp('env-snapshots-docker', ['api', 'worker'], {
    'sandbox.backend': 'docker',
    'sandbox.docker.defaultImage': DOCKER_IMAGE,
    'sandbox.docker.poolSize': 0,
  });
  const created: string[] = [];
  afterAll(() => {
    for (const tag of created) {
      try {
        execFileSync('docker', ['rmi', '-f', tag], { stdio: 'ignore' });
      } catch {
        // gone already
      }
    }
  });

  /** Runs a command in the environment; the run's id, timeline and the command's output. */
  const runCommandIn = async (environmentId: string, i: number) => {
    const script = `docker-snapshot-${i}`;
    model.script(script, [
      {
        toolCalls: [
          {
            name: 'run_command',
            arguments: { command: 'cat "$HOME/outside.txt" "$HOME/ran-in.txt"' },
          },
        ],
      },
      { text: 'done' },
    ]);
    const run = await api.post('/agent/runs', {
      prompt: `[script:${script}]`,
      config: { environment_id: environmentId },
    });
    const done = await waitFor(
      async () => (await api.get(`/agent/runs/${run.body.run_id}`)).body,
      (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
      { what: 'the docker run to finish', timeoutMs: 120_000 },
    );
    expect(done.state).toBe('SUCCEEDED');
    const output = model.requests
      .filter((r) => r.script === script)
      .at(-1)!
      .body.messages.filter((m) => m.role === 'tool')
      .at(-1)?.content;
    const types: string[] = (await api.get(`/agent/runs/${done.run_id}/timeline`)).body.events.map(
      (e: { event_type: string }) => e.event_type,
    );
    created.push(...snapshotImagesOf(environmentId));
    return { id: done.run_id as string, types, output: String(output) };
  };

  it('starts the next run from the committed container, and sets up again on a config change', async () => {
    const SETUP =
      'echo "$AMBIENT_RUN_ID" >> "$HOME/ran-in.txt"; echo written-by-setup > "$HOME/outside.txt"';
    const environment = await api.post('/agent/environments', {
      name: 'docker',
      setup_commands: [SETUP],
    });
    const uid = environment.body.uid as string;

    const first = await runCommandIn(uid, 1);
    expect(first.types).toContain('setup_command_succeeded');
    expect(first.types).not.toContain('setup_cached');
    expect(first.output).toContain('written-by-setup');
    const images = snapshotImagesOf(uid);
    expect(images).toHaveLength(1);
    expect(images[0]).toMatch(/^ambient-snapshot:[0-9a-f]{32}$/);
    // Neither a pool owner nor a run of its own: the sandbox's labels are emptied in the image.
    const labels = JSON.parse(
      execFileSync(
        'docker',
        ['image', 'inspect', '--format', '{{json .Config.Labels}}', images[0]],
        {
          encoding: 'utf8',
        },
      ),
    ) as Record<string, string>;
    expect(labels['dev.ambient.snapshot']).toBe('1');
    expect(labels['dev.ambient.pool-owner'] ?? '').toBe('');
    expect(labels['dev.ambient.run-id']).toBe('');

    const second = await runCommandIn(uid, 2);
    expect(second.types).toContain('setup_cached');
    expect(second.types).not.toContain('setup_command_succeeded');
    expect(second.types).not.toContain('environment_setup_started');
    // What setup wrote outside the workspace came with the image; setup did not run again.
    expect(second.output).toContain('written-by-setup');
    expect(second.output).toContain(first.id);
    expect(second.output).not.toContain(second.id);

    const changed = await api.patch(`/agent/environments/${uid}`, {
      setup_commands: [SETUP, 'true'],
    });
    expect(changed.status).toBe(200);
    const third = await runCommandIn(uid, 3);
    expect(third.types).toContain('setup_command_succeeded');
    expect(third.types).not.toContain('setup_cached');
    expect(third.output).toContain(third.id);
    expect(third.output).not.toContain(first.id);
    // The old config's image went when the new snapshot was kept.
    const now = snapshotImagesOf(uid);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(images[0]);
  });
});
