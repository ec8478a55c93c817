import request from 'supertest';
import { FakeModelServer, startFakeModelServer } from './fixtures/fake-model-server';
import { TcpProxy } from './support/tcp-proxy';
import {
  createTestEnvironment,
  MYSQL_URL,
  REDIS_URL,
  startTestApp,
  TestApp,
  TestEnvironment,
} from './support/test-app';
import { waitFor } from './support/wait';
import { spawnAmbient, waitForExit } from './support/worker-process';

const LIVE = '/api/v1/health/live';
const READY = '/api/v1/health/ready';

/**
 * Kubernetes-style probes: liveness never depends on anything, readiness reports what the
 * process's roles need and names what is down; the older /api/v1/health keeps its answers.
 */
describe('health probes (live / ready)', () => {
  let model: FakeModelServer;
  let env: TestEnvironment;

  beforeAll(async () => {
    model = await startFakeModelServer();
    env = createTestEnvironment('health_probes', model.url);
  });

  afterAll(async () => {
    await env?.destroy();
    await model?.close();
  });

  describe('api, worker and ingress in one process, MySQL and Redis behind cuttable proxies', () => {
    let app: TestApp;
    const redisProxy = proxyTo(REDIS_URL, 6379);
    const mysqlProxy = proxyTo(MYSQL_URL, 3306);
    const api = () => request(new URL(app.baseUrl).origin);
    const ingress = () => request(app.ingressUrl);

    beforeAll(async () => {
      await redisProxy.start();
      await mysqlProxy.start();
      const database = new URL(env.databaseUrl);
      database.port = String(mysqlProxy.port);
      database.hostname = '127.0.0.1';
      app = await startTestApp(env, ['api', 'worker', 'ingress'], {
        'redis.url': `redis://127.0.0.1:${redisProxy.port}`,
        'database.url': database.toString(),
      });
    });

    afterAll(async () => {
      await app?.close();
      await redisProxy.stop();
      await mysqlProxy.stop();
    });

    it('answers without a key: live checks nothing, ready checks MySQL, Redis and the sandbox', async () => {
      const live = await api().get(LIVE).expect(200);
      expect(live.body).toEqual({ status: 'ok', info: {}, error: {}, details: {} });

      const ready = await api().get(READY).expect(200);
      expect(ready.body.status).toBe('ok');
      expect(ready.body.error).toEqual({});
      expect(ready.body.details).toEqual({
        database: expect.objectContaining({ status: 'up' }),
        redis: expect.objectContaining({ status: 'up' }),
        sandbox: { status: 'up', backend: 'bubblewrap', isolated: true },
      });

      // The ingress port serves the same paths; the ingress needs no sandbox.
      await ingress().get(LIVE).expect(200);
      const ingressReady = await ingress().get(READY).expect(200);
      expect(Object.keys(ingressReady.body.details).sort()).toEqual(['database', 'redis']);
      await ingress().get('/health').expect(200, { status: 'ok' });

      // The older endpoint is unchanged.
      const health = await api().get('/api/v1/health').expect(200);
      expect(health.body).toEqual({
        status: 'ok',
        database: 'ok',
        redis: 'ok',
        sandbox: { backend: 'bubblewrap', isolated: true },
      });
    });

    it('Redis unreachable: ready is 503 naming redis, live stays 200; back when Redis is', async () => {
      await redisProxy.stop();
      const ready = await api().get(READY).expect(503);
      expect(ready.body.status).toBe('error');
      expect(Object.keys(ready.body.error)).toEqual(['redis']);
      expect(ready.body.error.redis.status).toBe('down');
      expect(ready.body.details.database.status).toBe('up');
      expect((await ingress().get(READY).expect(503)).body.error).toHaveProperty('redis');
      await api().get(LIVE).expect(200);
      await ingress().get(LIVE).expect(200);
      // The older endpoint answers as it always did: an Oz Error naming the dependency.
      const health = await api().get('/api/v1/health').expect(503);
      expect(health.body.detail).toBe('database: ok, redis: unreachable');

      await redisProxy.start();
      await waitFor(
        async () => (await api().get(READY)).status,
        (status) => status === 200,
        { what: 'readiness once Redis is back' },
      );
    });

    it('MySQL unreachable: ready is 503 naming database, live stays 200; back when MySQL is', async () => {
      await mysqlProxy.stop();
      const ready = await api().get(READY).expect(503);
      expect(Object.keys(ready.body.error)).toEqual(['database']);
      expect(ready.body.error.database.status).toBe('down');
      expect(ready.body.details.redis.status).toBe('up');
      expect((await ingress().get(READY).expect(503)).body.error).toHaveProperty('database');
      await api().get(LIVE).expect(200);

      await mysqlProxy.start();
      await waitFor(
        async () => (await api().get(READY)).status,
        (status) => status === 200,
        { what: 'readiness once MySQL is back' },
      );
    });
  });

  describe('a worker-only process (no HTTP server but AMBIENT_HEALTH_PORT)', () => {
    const children: ReturnType<typeof spawnAmbient>[] = [];

    const startWorker = async (extra: Record<string, string> = {}) => {
      const child = spawnAmbient(
        env.childEnv({
          AMBIENT_ROLES: 'worker',
          AMBIENT_HOST: '127.0.0.1',
          AMBIENT_HEALTH_PORT: '0',
          ...extra,
        }),
      );
      children.push(child);
      await child.ready;
      return request(/health probes on (http:\/\/[\d.:]+)/.exec(child.output())![1]);
    };

    afterAll(async () => {
      for (const { child } of children) {
        child.kill('SIGKILL');
        await waitForExit(child);
      }
    });

    it('serves live and ready (with its sandbox) on the health port, and nothing else', async () => {
      const health = await startWorker();
      await health.get(LIVE).expect(200);
      const ready = await health.get(READY).expect(200);
      expect(Object.keys(ready.body.details).sort()).toEqual(['database', 'redis', 'sandbox']);
      expect(ready.body.details.sandbox).toEqual({
        status: 'up',
        backend: 'bubblewrap',
        isolated: true,
      });
      const other = await health.get('/api/v1/agent/runs').expect(404);
      expect(other.body.error).toMatch(/only GET \/api\/v1\/health\/live/);
    });

    it('is not ready without a usable sandbox backend', async () => {
      const health = await startWorker({
        AMBIENT_SANDBOX: 'docker',
        DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      });
      const ready = await health.get(READY).expect(503);
      expect(Object.keys(ready.body.error)).toEqual(['sandbox']);
      expect(ready.body.error.sandbox).toMatchObject({ status: 'down', backend: 'unavailable' });
      await health.get(LIVE).expect(200);
    });
  });
});

function proxyTo(url: string, defaultPort: number): TcpProxy {
  const target = new URL(url);
  return new TcpProxy(target.hostname, Number(target.port || defaultPort));
}
