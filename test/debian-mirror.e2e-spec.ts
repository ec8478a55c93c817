/**
 * sandbox/agent-image/debian-mirror.sh: the mirror build-image.sh debootstraps from, read from
 * sample apt configurations in temporary directories (one-line and deb822 formats).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const SCRIPT = resolve(__dirname, '..', 'sandbox', 'agent-image', 'debian-mirror.sh');

let aptDir: string;

async function aptFiles(files: Record<string, string>): Promise<void> {
  await mkdir(join(aptDir, 'sources.list.d'), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(aptDir, name), text);
}

async function mirror(
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { AMBIENT_DEBIAN_MIRROR: _ignored, ...inherited } = process.env;
  try {
    const { stdout, stderr } = await promisify(execFile)(SCRIPT, [aptDir], {
      env: { ...inherited, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('debian-mirror.sh', () => {
  beforeEach(async () => {
    aptDir = await mkdtemp(join(tmpdir(), 'ambient-apt-'));
  });

  afterEach(async () => {
    await rm(aptDir, { recursive: true, force: true });
  });

  it('takes the main archive of a deb822 .sources file, not the security archive before it', async () => {
    await aptFiles({
      'sources.list.d/debian.sources': [
        'Types: deb',
        'URIs: http://mirror.example.org/debian-security',
        'Suites: bookworm-security',
        'Components: main',
        '',
        '# the main archive',
        'Types: deb deb-src',
        'URIs: http://mirror.example.org/debian/ http://other.example.org/debian',
        'Suites: bookworm bookworm-updates',
        'Components: main',
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
        '',
      ].join('\n'),
    });
    expect(await mirror()).toMatchObject({ code: 0, stdout: 'http://mirror.example.org/debian\n' });
  });

  it('prefers sources.list, skips deb-src, options, comments and non-Debian suites', async () => {
    await aptFiles({
      'sources.list': [
        '# deb http://commented.example.org/debian bookworm main',
        'deb-src http://src.example.org/debian bookworm main',
        'deb [arch=amd64 signed-by=/k.gpg] https://deb.nodesource.example/node_20.x nodistro main',
        'deb [arch=amd64] https://apt.example.net/debian trixie main contrib',
      ].join('\n'),
      'sources.list.d/later.sources':
        'Types: deb\nURIs: http://later.example.org/debian\nSuites: trixie\n',
    });
    expect(await mirror()).toMatchObject({ code: 0, stdout: 'https://apt.example.net/debian\n' });
  });

  it('skips disabled deb822 stanzas', async () => {
    await aptFiles({
      'sources.list.d/a.sources':
        'Enabled: no\nTypes: deb\nURIs: http://off.example.org/debian\nSuites: bookworm\n\n' +
        'Types: deb\nURIs: http://on.example.org/debian\nSuites: stable\n',
    });
    expect((await mirror()).stdout).toBe('http://on.example.org/debian\n');
  });

  it('uses AMBIENT_DEBIAN_MIRROR over the apt configuration', async () => {
    await aptFiles({ 'sources.list': 'deb http://apt.example.org/debian bookworm main\n' });
    expect(
      await mirror({ AMBIENT_DEBIAN_MIRROR: 'http://override.example.org/debian' }),
    ).toMatchObject({ code: 0, stdout: 'http://override.example.org/debian\n' });
  });

  it('fails saying what to set when apt names no Debian archive', async () => {
    await aptFiles({ 'sources.list': 'deb http://archive.ubuntu.example/ubuntu jammy main\n' });
    const result = await mirror();
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('set AMBIENT_DEBIAN_MIRROR');
  });
});
