import { TeamEndpoints } from '../src/modules/notifications/team-endpoints';
import { startTestApp, TestApp } from './support/test-app';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

/** An address nothing listens on: deliveries are recorded (and fail), never received. */
const HOOK_URL = 'http://127.0.0.1:9/ends';

/**
 * Each worker caches its teams' notification endpoints (read at every run's end) and drops them
 * when another replica announces a change, before that change is answered: an endpoint created
 * or changed on replica A applies to the next run that ends on replica B, the worker.
 */
describe('notification endpoints changed on one replica, runs ending on another', () => {
  const settings = { 'redis.cacheAckTimeoutMs': 60_000, 'egress.allow': '127.0.0.1:9' };
  const { api, env } = useTestApp('endpoints_replicas', ['api'], settings);
  let worker: TestApp;

  beforeAll(async () => {
    worker = await startTestApp(env, ['worker'], settings);
  });

  afterAll(async () => {
    await worker?.close();
  });

  const endedRun = async (): Promise<string> => {
    const created = await api.post('/agent/runs', { prompt: 'Say hi' });
    expect(created.status).toBe(200);
    const runId = created.body.run_id as string;
    expect(
      await waitFor(
        () => api.runState(runId),
        (state) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(state),
        { timeoutMs: 60_000, what: `run ${runId} to end` },
      ),
    ).toBe('SUCCEEDED');
    return runId;
  };
  const runsDeliveredTo = async (endpointId: string): Promise<string[]> => {
    const res = await api.get(`/notification-endpoints/${endpointId}/deliveries`);
    expect(res.status).toBe(200);
    return (res.body.deliveries as { payload: { data: { run: { id: string } } } }[]).map(
      (delivery) => delivery.payload.data.run.id,
    );
  };

  /** How many teams' endpoints B holds in memory. */
  const cachedOnB = () =>
    (worker.ambient.app.get(TeamEndpoints) as unknown as { cache: { size: number } }).cache.size;

  it('an endpoint created on A hears the next end on B; unsubscribed, it hears no more', async () => {
    // B reads the team's endpoints (none) at this end and keeps them (loaded beside the end).
    await endedRun();
    await waitFor(
      () => Promise.resolve(cachedOnB()),
      (size) => size > 0,
      {
        timeoutMs: 30_000,
        what: "B to hold the team's endpoints",
      },
    );

    const created = await api.post('/notification-endpoints', {
      url: HOOK_URL,
      events: ['run.succeeded'],
    });
    expect(created.status).toBe(201);
    const endpointId = created.body.id as string;
    const heard = await endedRun();
    expect(await runsDeliveredTo(endpointId)).toEqual([heard]);

    const changed = await api.patch(`/notification-endpoints/${endpointId}`, {
      events: ['run.failed'],
    });
    expect(changed.status).toBe(200);
    const after = await endedRun();
    const delivered = await runsDeliveredTo(endpointId);
    expect(delivered).toEqual([heard]);
    expect(delivered).not.toContain(after);
  }, 300_000);
});
