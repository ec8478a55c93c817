/**
 * Containers removed behind Ambient's back (`docker rm -f`, as a daemon restart does), end to end
 * (api + worker with a warm pool, fake model): the pool hands none of its dead containers out (the
 * run gets a fresh container, a miss unless the pool had replaced them already), and a run whose
 * container goes while a command runs ends in ERROR saying the sandbox was lost, not with a
 * failed command.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import Dockerode from 'dockerode';
import { currentPoolOwner } from '../src/modules/workers/sandbox/backends/docker/pool-owner';
import { SANDBOX_LABELS } from '../src/modules/workers/sandbox/sandbox.types';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { apiClient } from './support/api-client';
import { processesWithEnv } from './support/processes';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { waitFor } from './support/wait';

const IMAGE = 'ambient-agent:bookworm';
const BUILD_IMAGE = resolve(__dirname, '..', 'sandbox', 'agent-image', 'build-image.sh');
const CONTAINER_TIMEOUT = { timeoutMs: 60_000, intervalMs: 100 };
const docker = new Dockerode();

describe('docker sandboxes removed behind Ambient', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;
  let app: TestApp;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    // Cached by tag: a no-op once .ci/run (or an earlier test) built it.
    await promisify(execFile)(BUILD_IMAGE, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
    model = await startFakeModelServer();
    env = createTestEnvironment('sandbox_lost', model.url);
    app = await startTestApp(env, ['api', 'worker'], {
      'sandbox.backend': 'docker',
      'sandbox.readonlyPaths': '',
      'sandbox.docker.defaultImage': IMAGE,
      'sandbox.docker.poolSize': 2,
    });
    api = apiClient(app.baseUrl, app.apiKey);
  }, 600_000);

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    await model?.close();
  });

  const ended = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { timeoutMs: 60_000, what: `run ${runId} to end` },
    );

  const command = (text: string) => ({
    toolCalls: [{ name: 'run_command', arguments: { command: text } }],
  });

  /** This process's pool containers (the app runs in it), running ones only. */
  const poolContainers = async (): Promise<Dockerode.ContainerInfo[]> =>
    (
      await docker.listContainers({
        all: true,
        filters: { label: [`${SANDBOX_LABELS.poolOwner}=${currentPoolOwner()}`] },
      })
    ).filter((info) => info.State === 'running');

  /** Ids of the pool containers this process made since `since` (unix seconds), from the daemon's events. */
  const poolContainersMadeSince = async (since: number): Promise<string[]> => {
    const events = await docker.getEvents({
      since,
      until: Math.ceil(Date.now() / 1000),
      filters: {
        type: ['container'],
        event: ['create'],
        label: [`${SANDBOX_LABELS.poolOwner}=${currentPoolOwner()}`],
      },
    });
    let text = '';
    for await (const chunk of events) text += String(chunk);
    return text
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line) as { id: string }).id);
  };

  const handouts = async (): Promise<Record<string, number>> => {
    const text = await (await fetch(app.ambient.metricsUrl!)).text();
    const count = (result: string): number =>
      Number(
        new RegExp(
          `^ambient_sandbox_pool_handouts_total\\{result="${result}"\\} (\\d+)$`,
          'm',
        ).exec(text)?.[1] ?? 0,
      );
    return { hit: count('hit'), miss: count('miss') };
  };

  it('hands out none of the pool containers removed behind its back: the run gets a fresh one, counted as what it was', async () => {
    const pooled = await waitFor(poolContainers, (found) => found.length === 2, {
      ...CONTAINER_TIMEOUT,
      what: 'the pool to fill',
    });
    const removedAt = Math.floor(Date.now() / 1000);
    await Promise.all(pooled.map((info) => docker.getContainer(info.Id).remove({ force: true })));
    const before = await handouts();

    model.script('after-removal', [command('echo fresh; hostname'), { text: 'ran' }]);
    const created = await api.post('/agent/runs', { prompt: '[script:after-removal]' });
    const run = await ended(created.body.run_id);
    expect(run.state).toBe('SUCCEEDED');
    const results = model.requests
      .filter((request) => request.script === 'after-removal')
      .flatMap((request) => request.body.messages.filter((message) => message.role === 'tool'))
      .map(
        (message) => JSON.parse(String(message.content)) as { exit_code: number; output: string },
      );
    expect(results[0]).toMatchObject({ exit_code: 0, output: expect.stringMatching(/^fresh\n/) });
    // Not one of the removed containers (a container's hostname is its id's first 12 digits).
    const hostname = results[0].output.split('\n')[1];
    expect(pooled.map((info) => info.Id.slice(0, 12))).not.toContain(hostname);

    // A miss, unless the pool's periodic look replaced the removed containers before the run asked
    // (then the run got one made since, a true hit): the counters say which really happened.
    const madeSince = await poolContainersMadeSince(removedAt);
    const fromPool = madeSince.some((id) => id.startsWith(hostname));
    expect(await handouts()).toEqual(
      fromPool
        ? { hit: before.hit + 1, miss: before.miss }
        : { hit: before.hit, miss: before.miss + 1 },
    );
    // The pool made others in place of the removed ones.
    await waitFor(poolContainers, (found) => found.length === 2, {
      ...CONTAINER_TIMEOUT,
      what: 'the pool to refill',
    });
  }, 180_000);

  it('ends a run whose container is removed under a running command in ERROR, the sandbox lost', async () => {
    model.script('removed-while-running', [command('sleep 300'), { text: 'never' }]);
    const created = await api.post('/agent/runs', { prompt: '[script:removed-while-running]' });
    const runId = created.body.run_id as string;
    await waitFor(
      async () => processesWithEnv('AMBIENT_RUN_ID', runId).length,
      (count) => count >= 1,
      { ...CONTAINER_TIMEOUT, what: 'the sleep to start' },
    );
    // By name: a pooled container takes the execution's name at hand-out.
    const [container] = await docker.listContainers({ filters: { name: [`ambient-${runId}-`] } });
    await docker.getContainer(container.Id).remove({ force: true });

    const run = await ended(runId);
    expect(run.state).toBe('ERROR');
    expect(run.status_message).toMatchObject({
      error_code: 'resource_unavailable',
      retryable: true,
      message: expect.stringMatching(/^the sandbox was lost: its container/),
    });
    // The model was not told of a failed command: the run ended at the loss.
    expect(model.requests.filter((r) => r.script === 'removed-while-running')).toHaveLength(1);
  }, 180_000);
});
