import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_CSP } from '../src/modules/console/console-assets';
import { apiClient } from './support/api-client';
import {
  createTestEnvironment,
  REPO_ROOT,
  startTestApp,
  TestApp,
  TestEnvironment,
} from './support/test-app';
import { TS_REGISTER } from './support/ts-register-path';

/** How the api role serves the built console: files, deep links, caching, CSP, missing build. */
describe('console assets (api role)', () => {
  let env: TestEnvironment;
  let app: TestApp;
  let web: ReturnType<typeof apiClient>;
  const fixture = mkdtempSync(join(tmpdir(), 'ambient-console-fixture-'));
  // Installed under a dotted directory (as in ~/.local/…), which must not stop it being served.
  const built = join(fixture, '.hidden', 'console');

  beforeAll(async () => {
    mkdirSync(join(built, 'assets'), { recursive: true });
    writeFileSync(join(built, '.env'), 'SECRET=do-not-serve');
    writeFileSync(join(built, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(built, 'assets', 'index-abc123.js'), 'console.log(1)');
    env = createTestEnvironment('console_serving', 'http://127.0.0.1:9/v1');
    app = await startTestApp(env, ['api'], { 'server.consoleDir': built });
    web = apiClient(app.baseUrl, app.apiKey);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
    rmSync(fixture, { recursive: true, force: true });
  });

  const get = (path: string) => web.raw().get(path);

  it('serves index.html for the app and its deep links, revalidated, with a strict CSP', async () => {
    for (const path of ['/console/', '/console/runs/4b3c', '/console/webhooks']) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/html/);
      expect(res.text).toContain('<title>console</title>');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
      expect(res.headers['content-security-policy']).toMatch(/script-src 'self';/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
    const bare = await get('/console?x=1');
    expect(bare.status).toBe(301);
    expect(bare.headers.location).toBe('/console/?x=1');
  });

  it('caches hashed assets for a year, 404s a missing one, refuses dotfiles and paths out of the directory', async () => {
    const asset = await get('/console/assets/index-abc123.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await get('/console/assets/missing.js')).status).toBe(404);
    const dotfile = await get('/console/.env');
    expect([403, 404]).toContain(dotfile.status);
    expect(dotfile.text).not.toContain('do-not-serve');
    const escape = await get('/console/..%2f..%2fpackage.json');
    expect(escape.status).toBe(404);
    expect(escape.text).not.toContain('"name"');
  });

  it('leaves the API and its auth alone', async () => {
    expect((await web.raw().get('/api/v1/agent/runs')).status).toBe(401);
    expect((await web.get('/agent/runs')).status).toBe(200);
  });

  it('answers 503 naming `npm run build` when the console is not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'ambient-console-empty-'));
    const other = await startTestApp(env, ['api'], { 'server.consoleDir': empty });
    try {
      const res = await apiClient(other.baseUrl, other.apiKey).raw().get('/console/runs/x');
      expect(res.status).toBe(503);
      expect(res.body.detail).toMatch(/npm run build/);
    } finally {
      await other.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it("the console's checked-in API types match the served OpenAPI document (npm run console:api)", async () => {
    const document = join(built, 'openapi.json');
    writeFileSync(document, JSON.stringify((await web.get('/openapi.json')).body));
    // openapi-typescript is ESM that jest's CommonJS runtime cannot load: run it in Node.
    const generated = spawnSync(
      process.execPath,
      ['-r', TS_REGISTER, 'console/scripts/schema-of.ts', document],
      { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    expect(generated.stderr).toBe('');
    const checkedIn = readFileSync(join(REPO_ROOT, 'console/src/api/schema.d.ts'), 'utf8');
    if (generated.stdout !== checkedIn) {
      throw new Error('console/src/api/schema.d.ts is stale: run `npm run console:api`');
    }
  });
});
