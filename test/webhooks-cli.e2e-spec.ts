import { CliResult, runCli } from './support/cli-process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './support/test-app';
import { deliver } from './support/webhook-helpers';

/** The secrets / factories / webhooks CLI commands, run as `npm run cli` runs them. */
describe('webhook CLI (child processes against a running API)', () => {
  let env: TestEnvironment;
  let app: TestApp;

  const cli = (args: string[], stdin?: string): Promise<CliResult> =>
    runCli(
      args,
      { ...env.childEnv(), AMBIENT_API_URL: app.baseUrl, AMBIENT_API_KEY: app.apiKey },
      stdin,
    );

  beforeAll(async () => {
    env = createTestEnvironment('wh_cli', 'http://127.0.0.1:9/v1');
    app = await startTestApp(env, ['api', 'ingress']);
  });

  afterAll(async () => {
    await app?.close();
    await env?.destroy();
  });

  it('creates a secret from stdin, applies a definition directory, and reads the delivery log', async () => {
    const secret = await cli(
      ['secrets', 'create', '--name', 'CLI_HOOK_SECRET', '--value-stdin'],
      'cli-token-0123456789abcdef\n',
    );
    expect(secret.code).toBe(0);
    expect(secret.stdout).not.toContain('cli-token');
    const created = await cli(['factories', 'create', '--name', 'From CLI']);
    expect(created.code).toBe(0);
    const factory = JSON.parse(created.stdout).uid as string;

    const dir = mkdtempSync(join(tmpdir(), 'ambient-def-'));
    mkdirSync(join(dir, 'webhooks'));
    writeFileSync(join(dir, 'factory.yaml'), 'schemaVersion: v1alpha1\nname: From CLI\n');
    writeFileSync(
      join(dir, 'webhooks', 'ci.yaml'),
      'authMode: token\nsecretName: CLI_HOOK_SECRET\nauthMode: token\n',
    );
    const refused = await cli(['factories', 'apply', '--factory', factory, '--dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/webhooks\/ci\.yaml:3:1: YAML: Map keys must be unique/);
    writeFileSync(
      join(dir, 'webhooks', 'ci.yaml'),
      'authMode: token\nsecretName: CLI_HOOK_SECRET\n',
    );
    const applied = await cli(['factories', 'apply', '--factory', factory, '--dir', dir]);
    expect(applied).toMatchObject({ code: 0, stdout: 'applied 2 file(s) to factory "From CLI"\n' });

    const listed = await cli(['webhooks', 'list', '--factory', factory]);
    const [uid] = listed.stdout.trim().split(/\s+/);
    expect(
      (
        await deliver(`${app.ingressUrl}/webhooks/w/${uid}`, '{"via":"cli"}', {
          Authorization: 'Bearer cli-token-0123456789abcdef',
          'X-Ambient-Delivery-Id': 'cli-1',
        })
      ).status,
    ).toBe(202);
    const log = await cli(['webhooks', 'deliveries', '--factory', factory, '--webhook', uid]);
    expect(log.stdout).toMatch(/Accepted\s+13 B\s+cli-1/);

    const made = await cli([
      'webhooks',
      'create',
      '--factory',
      factory,
      '--name',
      'signed',
      '--auth-mode',
      'signature',
      '--scheme',
      'standard_webhooks',
    ]);
    expect(JSON.parse(made.stdout).secret).toMatch(/^whsec_/);
    expect(made.stderr).toContain('shown only now');
    const noKey = await cli(['secrets', 'list', '--key', '']);
    expect(noKey.code).not.toBe(0);
  });
});
