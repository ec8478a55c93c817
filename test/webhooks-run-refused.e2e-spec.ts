import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliResult, runCli } from './support/cli-process';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';
import { createFactory, createWebhook, deliver } from './support/webhook-helpers';

interface DeliveryEntry {
  delivery_id: string;
  status: string;
  evaluated_at: string | null;
  runs: {
    automation: string;
    run_id: string | null;
    error_code: string | null;
    error: string | null;
  }[];
}

/**
 * An automation pinning a model that is in the catalogue but not enabled (`locked-model`: its
 * provider key is unset): `factories apply` warns, and a delivery it could not start a run for
 * says why in the delivery log (API and CLI).
 */
describe('a delivery whose automation could not start a run (api + ingress + worker)', () => {
  const { env, app, api } = useTestApp('wh_refused', ['api', 'ingress', 'worker']);
  let dir: string | undefined;
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const cli = (args: string[]): Promise<CliResult> =>
    runCli(args, { ...env.childEnv(), AMBIENT_API_URL: app.baseUrl, AMBIENT_API_KEY: app.apiKey });

  const automation = (name: string, model: string, webhookUid: string) => ({
    path: `automations/${name}/automation.md`,
    content: `---\nmodel: ${model}\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n      webhook_ids: [${webhookUid}]\n---\nTriage the event.\n`,
  });

  it('warns at apply (API and CLI), then shows the refusal on the delivery (API and CLI)', async () => {
    const factory = await createFactory(api, 'Refusals');
    const hook = await createWebhook(api, factory, { name: 'alerts' });
    const current = (await api.get(`/factory/${factory}/definition`)).body.files as {
      path: string;
      content: string;
    }[];

    const enabled = await api.put(`/factory/${factory}/definition`, {
      files: [...current, automation('pinned', 'fake-model', hook.uid)],
    });
    expect(enabled.status).toBe(200);
    expect(enabled.body.warnings).toEqual([]);

    const locked = await api.put(`/factory/${factory}/definition`, {
      files: [...current, automation('pinned', 'locked-model', hook.uid)],
    });
    expect(locked.status).toBe(200);
    expect(locked.body.warnings).toEqual([
      {
        code: 'model_not_enabled',
        path: 'automations/pinned/automation.md',
        line: 2,
        column: expect.any(Number),
        message: expect.stringMatching(
          /^model "locked-model" is not enabled \(provider key AMBIENT_TEST_NEVER_SET_KEY is not set\): .*omit the model to use the default \(fake-model\)$/,
        ),
      },
    ]);

    dir = mkdtempSync(join(tmpdir(), 'ambient-refused-'));
    for (const file of [...current, automation('pinned', 'locked-model', hook.uid)]) {
      mkdirSync(join(dir, dirname(file.path)), { recursive: true });
      writeFileSync(join(dir, file.path), file.content);
    }
    const applied = await cli(['factories', 'apply', '--factory', factory, '--dir', dir]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toMatch(/^applied \d+ file\(s\) to factory "Refusals"\n$/);
    expect(applied.stderr).toMatch(
      /^warning: automations\/pinned\/automation\.md:2:\d+: model "locked-model" is not enabled \(provider key AMBIENT_TEST_NEVER_SET_KEY is not set\)/m,
    );

    const sent = await deliver(`${app.ingressUrl}/webhooks/w/${hook.uid}`, '{"alert":"disk"}', {
      Authorization: `Bearer ${hook.secret}`,
      'X-Ambient-Delivery-Id': 'alert-1',
    });
    expect(sent.status).toBe(202);
    const entry = await waitFor(
      async () =>
        (
          (await api.get(`/factory/${factory}/webhooks/${hook.uid}/deliveries`)).body
            .deliveries as DeliveryEntry[]
        ).find((d) => d.delivery_id === 'alert-1'),
      (found) => !!found?.evaluated_at,
      { what: 'delivery alert-1 to be evaluated' },
    );
    expect(entry!.status).toBe('Accepted');
    expect(entry!.runs).toEqual([
      {
        automation: 'pinned',
        run_id: null,
        error_code: 'invalid_request',
        error: expect.stringMatching(
          /config\.model_id: model "locked-model" is unavailable: provider key AMBIENT_TEST_NEVER_SET_KEY is not set/,
        ),
      },
    ]);
    expect((await api.get(`/agent/runs?metadata[delivery_id]=alert-1`)).body.runs).toEqual([]);

    const log = await cli(['webhooks', 'deliveries', '--factory', factory, '--webhook', hook.uid]);
    expect(log.code).toBe(0);
    expect(log.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(
        /Accepted\s+16 B\s+alert-1 {2}pinned: no run: .*model "locked-model" is unavailable: provider key AMBIENT_TEST_NEVER_SET_KEY is not set$/,
      ),
    ]);
  });
});
