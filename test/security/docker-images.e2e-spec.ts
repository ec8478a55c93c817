import { execFileSync } from 'node:child_process';
import { APP_CONFIG, AppConfig } from '../../src/config/app-config';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';

const DOCKER_IMAGE = 'ambient-agent:bookworm';
const dockerImagePresent = (() => {
  try {
    execFileSync('docker', ['image', 'inspect', DOCKER_IMAGE], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * Images are an operator's choice: an environment names only what AMBIENT_DOCKER_IMAGES allows,
 * never a snapshot image; a run re-checks it, the registry passes the egress guard before the
 * daemon is asked to pull, and a failed pull tells the tenant nothing of what the daemon reached.
 */
(dockerImagePresent ? describe : describe.skip)('docker images an environment may name', () => {
  const { app, api } = useTestApp('docker-images', ['api', 'worker'], {
    'sandbox.backend': 'docker',
    'sandbox.docker.defaultImage': DOCKER_IMAGE,
    'sandbox.docker.poolSize': 0,
    // An operator's list, with a prefix that (by mistake) names the database's port.
    'sandbox.docker.images': `${DOCKER_IMAGE},ambient-test/,127.0.0.1:3306/`,
  });

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish`, timeoutMs: 120_000 },
    );

  const runIn = async (image: string) => {
    const environment = await api.post('/agent/environments', { name: image, docker_image: image });
    expect(environment.status).toBe(201);
    const created = await api.post('/agent/runs', {
      prompt: 'hi',
      config: { environment_id: environment.body.uid },
    });
    expect(created.status).toBe(200);
    return { uid: environment.body.uid as string, run: await finished(created.body.run_id) };
  };

  it('refuses an image the operator does not list, and every snapshot image, naming the field', async () => {
    const count = async () => (await api.get('/agent/environments')).body.environments.length;
    const before = await count();
    for (const image of [
      '10.0.0.5:5000/x/y:1',
      'ghcr.io/acme/tool:1',
      'ambient-snapshot:0123456789abcdef0123456789abcdef',
      'docker.io/library/ambient-snapshot:latest',
      'ambient-test/../x',
    ]) {
      const res = await api.post('/agent/environments', { name: 'img', docker_image: image });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^docker_image: /);
    }
    const unlisted = await api.post('/agent/environments', {
      name: 'img',
      docker_image: 'ghcr.io/acme/tool:1',
    });
    expect(unlisted.body.detail).toContain('AMBIENT_DOCKER_IMAGES');
    const created = await api.post('/agent/environments', { name: 'ok' });
    const moved = await api.patch(`/agent/environments/${created.body.uid}`, {
      docker_image: 'ambient-snapshot:0123456789abcdef0123456789abcdef',
    });
    expect(moved.status).toBe(400);
    expect(
      (await api.get(`/agent/environments/${created.body.uid}`)).body.config,
    ).not.toHaveProperty('docker_image');
    expect(await count()).toBe(before + 1);
  });

  it('refuses a registry the egress guard refuses before the daemon connects to it', async () => {
    const { run } = await runIn('127.0.0.1:3306/x/y:1');
    expect(run.state).toBe('FAILED');
    expect(run.status_message.error_code).toBe('environment_setup_failed');
    expect(run.status_message.message).toContain('names the registry 127.0.0.1:3306');
    expect(run.status_message.message).toContain('AMBIENT_EGRESS_ALLOW');
    // Nothing of what listens there (MariaDB's handshake names its version).
    expect(run.status_message.message).not.toMatch(/mariadb|mysql|handshake/i);
  });

  it('says only that the image could not be pulled', async () => {
    const { run } = await runIn('ambient-test/does-not-exist:never');
    expect(run.state).toBe('FAILED');
    expect(run.status_message.message).toBe(
      'the image "ambient-test/does-not-exist:never" could not be pulled',
    );
  });

  it('re-checks the image when a run starts, after the operator narrowed the list', async () => {
    const docker = app.ambient.app.get<AppConfig>(APP_CONFIG).sandbox.docker;
    const listed = docker.images;
    const environment = await api.post('/agent/environments', {
      name: 'before',
      docker_image: 'ambient-test/old:1',
    });
    expect(environment.status).toBe(201);
    docker.images = DOCKER_IMAGE;
    try {
      const created = await api.post('/agent/runs', {
        prompt: 'hi',
        config: { environment_id: environment.body.uid },
      });
      const run = await finished(created.body.run_id);
      expect(run.state).toBe('FAILED');
      expect(run.status_message.error_code).toBe('environment_setup_failed');
      expect(run.status_message.message).toContain(
        `"ambient-test/old:1" is not an image this server allows (AMBIENT_DOCKER_IMAGES: ${DOCKER_IMAGE})`,
      );
    } finally {
      docker.images = listed;
    }
  });
});
