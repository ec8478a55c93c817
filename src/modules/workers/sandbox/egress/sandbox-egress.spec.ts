import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dockerSandboxSettings } from '../../../../../test/support/docker-sandbox';
import type { EnvironmentConfig } from '../../../environments';
import { Sandboxes } from '../sandboxes';
import { SandboxError } from '../sandbox.types';
import { egressPolicyFor } from './execution-egress';

describe('egress of sandboxes', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'ambient-sandbox-egress-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const open = (sandboxes: Sandboxes, environment: EnvironmentConfig) =>
    sandboxes.open({
      runId: 'run',
      executionId: 1,
      teamId: 'team',
      workspaceDir: root,
      environment,
      apiUrl: null,
    });

  it('refuses an allowlist environment on the process backend, which cannot confine it', async () => {
    const sandboxes = new Sandboxes(
      { ...dockerSandboxSettings(), backend: 'process' },
      root,
      'test',
      () => undefined,
    );
    const refused = open(sandboxes, {
      name: 'locked',
      network: 'allowlist',
      egress_allow: ['api.example.com'],
    });
    await expect(refused).rejects.toThrow(SandboxError);
    await expect(refused).rejects.toMatchObject({
      code: 'resource_unavailable',
      message: expect.stringMatching(/^network allowlist needs a sandbox backend that confines/),
    });
    // `none` still runs there, as it always did.
    const plain = await open(sandboxes, { name: 'plain', network: 'none' });
    await plain.close();
  });

  it('fails an execution whose stored rules no longer parse rather than open anything', () => {
    expect(() =>
      egressPolicyFor('allowlist', { network: 'allowlist', egress_allow: ['*.com'] }, []),
    ).toThrow(
      expect.objectContaining({
        code: 'environment_setup_failed',
        message: expect.stringMatching(/^the environment's egress_allow\.0: /),
      }),
    );
  });

  it('gives egress every host (no rules) and none no proxy at all', () => {
    expect(egressPolicyFor('egress', { egress_allow: ['api.example.com'] }, [])).toEqual({
      mode: 'egress',
      rules: [],
      secrets: [],
    });
    expect(egressPolicyFor('none', null, [])).toBeNull();
  });

  it("adds the hosts people approved for the run to an allowlist's rules, and to nothing else", () => {
    const policy = egressPolicyFor(
      'allowlist',
      { egress_allow: ['api.example.com'] },
      [],
      ['example.org:443', '[2001:db8::1]:8443'],
    );
    expect(policy?.rules.map((rule) => [rule.host, rule.port])).toEqual([
      ['api.example.com', null],
      ['example.org', 443],
      ['2001:db8::1', 8443],
    ]);
    expect(egressPolicyFor('egress', null, [], ['example.org:443'])?.rules).toEqual([]);
  });
});
