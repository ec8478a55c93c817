import type Redis from 'ioredis';
import type { Socket } from 'node:net';
import { Invalidations } from '../src/common/cache/invalidations';
import { CliResult, runCli } from './support/cli-process';
import { apiClient } from './support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { settledWithin, waitFor } from './support/wait';

describe('admin CLI (child processes on a real database)', () => {
  let env: TestEnvironment;
  let app: TestApp | undefined;

  /** Runs the CLI as `npm run cli` does, against this file's own database. */
  const cli = (...args: string[]): Promise<CliResult> => runCli(args, env.childEnv());

  const lastLine = (text: string) => text.trimEnd().split('\n').at(-1) ?? '';

  beforeAll(() => {
    // No run executes here, so the model catalogue can point nowhere.
    env = createTestEnvironment('cli', 'http://127.0.0.1:9/v1');
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
  });

  it('prints help on stdout and rejects bad usage with exit code 2', async () => {
    const [help, commandHelp] = await Promise.all([
      cli('--help'),
      cli('api-keys', 'revoke', '--help'),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'api-keys create --team <name> [--role admin|member|viewer] [--name <label>] [--create-team]',
    );
    expect(commandHelp.code).toBe(0);
    expect(commandHelp.stdout).toContain('Usage: api-keys revoke --id <id>');

    const misuses = [[], ['nope'], ['api-keys'], ['api-keys', 'create'], ['migrate', '--x']];
    const results = await Promise.all(misuses.map((args) => cli(...args)));
    results.forEach((result, i) => {
      expect({ args: misuses[i], code: result.code, stdout: result.stdout }).toEqual({
        args: misuses[i],
        code: 2,
        stdout: '',
      });
      expect(result.stderr).toMatch(/^ambient: /);
    });
  });

  it('asks for "migrate" before the database exists, then migrates idempotently', async () => {
    const early = await cli('api-keys', 'list', '--team', 'any');
    expect(early.code).toBe(1);
    expect(early.stderr).toContain('run the "migrate" command first');

    const check = await cli('migrate', '--check');
    expect(check.code).toBe(1);
    expect(check.stderr.trim()).toMatch(
      /^ambient: database "amb_t_cli_\w+" has pending migrations; run "migrate"$/,
    );

    const first = await cli('migrate');
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toContain('applied ');
    const second = await cli('migrate');
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toContain('is up to date');
    expect(await cli('migrate', '--check')).toMatchObject({ code: 0, stderr: '' });
  }, 240_000); // six CLI processes, each compiling TypeScript at start (≈ 5–15 s under load)

  it('refuses a key for an unknown team with a clear message', async () => {
    const result = await cli('api-keys', 'create', '--team', 'no-such-team');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('team "no-such-team" does not exist');
    expect(result.stderr).toContain('--create-team');
  });

  it('creates teams and keys that authenticate, lists them without secrets, revokes them', async () => {
    const team = await cli('teams', 'create', '--name', 'cli-made');
    expect(team.code).toBe(0);
    expect(team.stdout.trim()).toMatch(/^[A-Za-z0-9]{22}$/);
    const again = await cli('teams', 'create', '--name', 'cli-made');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('team "cli-made" already exists');

    const created = await cli(
      'api-keys',
      'create',
      '--team',
      'ops',
      '--create-team',
      '--name',
      'ci',
    );
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('shown only once');
    const key = lastLine(created.stdout);
    expect(key).toMatch(/^amb_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}$/);
    const keyId = /API key "ci" \(id ([A-Za-z0-9]{22})\)/.exec(created.stderr)?.[1];
    expect(keyId).toBeDefined();

    // Cached for as long as a CLI process may take to start under load (see the revocation below).
    app = await startTestApp(env, ['api'], { 'redis.cacheTtlMs': 60_000 });
    const api = apiClient(app.baseUrl, key);
    expect((await api.get('/agent/models')).status).toBe(200);

    const listed = await cli('api-keys', 'list', '--team', 'ops');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+ROLE\s+PREFIX\s+CREATED\s+LAST USED\s+REVOKED$/m);
    expect(listed.stdout).toMatch(new RegExp(`^${keyId}\\s+ci\\s+admin\\s`, 'm'));
    expect(listed.stdout).toContain(keyId!);
    expect(listed.stdout).toContain(key.slice(4, 16));
    expect(listed.stdout).not.toContain(key);
    expect(lastLine(listed.stdout)).toMatch(/\sno$/);

    // The revocation returns only once the running server dropped the key from its cache: with
    // the server's subscription paused, the CLI waits; the server still serves the cached key.
    expect((await api.get('/agent/models')).status).toBe(200);
    const subscriber = (app.ambient.app.get(Invalidations) as unknown as { subscriber: Redis })
      .subscriber;
    const stream = subscriber.stream as Socket;
    stream.pause();
    // Nothing but the server's acknowledgement ends this CLI's wait (its own bound: 60 s).
    const revoking = runCli(
      ['api-keys', 'revoke', '--id', keyId!],
      env.childEnv({ AMBIENT_CACHE_ACK_TIMEOUT_MS: '60000' }),
    );
    try {
      await waitFor(
        () => Promise.resolve(stream.readableLength),
        (buffered) => buffered > 0,
        { what: "the CLI's invalidation to reach the server", timeoutMs: 120_000 },
      );
      expect((await api.get('/agent/models')).status).toBe(200);
      // A CLI that did not wait would have ended well within this.
      await expect(settledWithin(revoking, 'the revoking CLI', 3_000)).rejects.toThrow(
        'timed out waiting for the revoking CLI',
      );
    } finally {
      stream.resume();
    }
    const revoked = await revoking;
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    expect((await api.get('/agent/models')).status).toBe(401);
    expect(lastLine((await cli('api-keys', 'list', '--team', 'ops')).stdout)).toMatch(/\d{2}Z$/);
    expect((await cli('api-keys', 'revoke', '--id', keyId!)).code).toBe(0);

    const unknown = await cli('api-keys', 'revoke', '--id', 'not-a-key');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no API key with id "not-a-key"');

    const viewer = await cli('api-keys', 'create', '--team', 'ops', '--role', 'viewer');
    expect(viewer.code).toBe(0);
    expect(viewer.stderr).toContain('with role viewer');
    const asViewer = apiClient(app.baseUrl, lastLine(viewer.stdout));
    expect((await asViewer.get('/agent/models')).status).toBe(200);
    const refused = await asViewer.post('/agent/runs', { prompt: 'x' });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('role "viewer" lacks permission "runs.create"');
    const badRole = await cli('api-keys', 'create', '--team', 'ops', '--role', 'owner');
    expect(badRole.code).toBe(1);
    expect(badRole.stderr).toContain('--role: must be one of admin, member, viewer (got "owner")');
  }, 240_000); // ten CLI processes, each compiling TypeScript at start (≈ 5–15 s under load)
});
