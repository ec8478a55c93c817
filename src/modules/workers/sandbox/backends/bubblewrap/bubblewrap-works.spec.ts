import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bubblewrapWorks } from './bubblewrap-sandbox';

/** The start-up probe of bwrap says what to do when it does not work. */
describe('bubblewrapWorks', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bwrap-probe-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names the user-namespace settings when bwrap cannot make a namespace', async () => {
    const bwrap = join(dir, 'bwrap');
    await writeFile(
      bwrap,
      '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n',
    );
    await chmod(bwrap, 0o755);
    const probe = await bubblewrapWorks(bwrap);
    expect(probe.ok).toBe(false);
    expect(probe.detail).toBe(
      `${bwrap} fails (bwrap: No permissions to create new namespace): allow unprivileged user ` +
        'namespaces (sysctl kernel.unprivileged_userns_clone=1, and ' +
        'kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu) or run as root',
    );
  });

  it('says bwrap is not installed when there is none', async () => {
    const probe = await bubblewrapWorks(join(dir, 'no-such-bwrap'));
    expect(probe).toEqual({ ok: false, detail: `${join(dir, 'no-such-bwrap')} is not installed` });
  });
});
