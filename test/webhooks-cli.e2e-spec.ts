import { CliResult, runCli } from './support/cli-process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useTestApp } from './support/use-test-app';
import { deliver } from './support/webhook-helpers';

/** The secrets / factories / webhooks CLI commands, run as `npm run cli` runs them. */
describe('webhook CLI (child processes against a running API)', () => {
  const cli = (args: string[], stdin?: string): Promise<CliResult> =>
    runCli(
      args,
      { ...env.childEnv(), AMBIENT_API_URL: app.baseUrl, AMBIENT_API_KEY: app.apiKey },
      stdin,
    );

  const { env, app } = useTestApp('wh_cli', ['api', 'ingress'], {}, { model: false });
  let dir: string | undefined;
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
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

    dir = mkdtempSync(join(tmpdir(), 'ambient-def-'));
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

  it('shows, disables, enables and rotates a webhook, and pages its log with --cursor', async () => {
    const factory = JSON.parse((await cli(['factories', 'create', '--name', 'Paging'])).stdout)
      .uid as string;
    const made = JSON.parse(
      (await cli(['webhooks', 'create', '--factory', factory, '--name', 'pager'])).stdout,
    ) as { uid: string; secret: string };
    const ids = ['--factory', factory, '--webhook', made.uid];
    const url = `${app.ingressUrl}/webhooks/w/${made.uid}`;
    const send = (secret: string, id: string) =>
      deliver(url, `{"n":"${id}"}`, {
        Authorization: `Bearer ${secret}`,
        'X-Ambient-Delivery-Id': id,
      });

    const shown = await cli(['webhooks', 'get', ...ids]);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      uid: made.uid,
      name: 'pager',
      auth_mode: 'token',
      enabled: true,
    });
    expect(shown.stdout).not.toContain(made.secret);

    const disabled = await cli(['webhooks', 'disable', ...ids]);
    expect(JSON.parse(disabled.stdout)).toMatchObject({ enabled: false });
    expect((await send(made.secret, 'p-0')).status).toBe(404);
    const enabled = await cli(['webhooks', 'enable', ...ids]);
    expect(JSON.parse(enabled.stdout)).toMatchObject({ enabled: true });
    expect((await send(made.secret, 'p-1')).status).toBe(202);

    const rotated = JSON.parse((await cli(['webhooks', 'rotate-secret', ...ids])).stdout) as {
      secret: string;
    };
    expect(rotated.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.secret).not.toBe(made.secret);
    expect((await send(made.secret, 'p-old')).status).toBe(401);
    expect((await send(rotated.secret, 'p-2')).status).toBe(202);
    expect((await send(rotated.secret, 'p-3')).status).toBe(202);

    const first = await cli(['webhooks', 'deliveries', ...ids, '--limit', '2']);
    expect(first.code).toBe(0);
    expect(first.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/Accepted\s+11 B\s+p-3$/),
      expect.stringMatching(/Accepted\s+11 B\s+p-2$/),
    ]);
    const cursor = /^more: --cursor (\S+)$/m.exec(first.stderr)?.[1];
    expect(cursor).toBeDefined();
    const rest = await cli(['webhooks', 'deliveries', ...ids, '--limit', '2', '--cursor', cursor!]);
    expect(rest.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/Rejected \(auth\)\s+13 B\s+-$/),
      expect.stringMatching(/Accepted\s+11 B\s+p-1$/),
    ]);
    expect(rest.stderr).not.toContain('more:');
  });
});
