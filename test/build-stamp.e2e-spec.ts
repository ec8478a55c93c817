import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './support/test-app';

const STAMP_MODULE = join(REPO_ROOT, 'scripts/build-stamp.mjs');

/** Calls scripts/build-stamp.mjs (plain ESM, as npm start and bin/ambient.mjs load it) on `root`. */
function stamp(root: string, call: 'writeStamp' | 'buildIsCurrent'): string {
  const script = `import(${JSON.stringify(STAMP_MODULE)}).then((m) => process.stdout.write(String(m.${call}(${JSON.stringify(root)}))))`;
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
}

/** npm start rebuilds, and the CLI leaves dist/, exactly when a build input changed. */
describe('build stamp', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-stamp-'));
    mkdirSync(join(root, 'src/cli'), { recursive: true });
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'src/cli/main.ts'), 'export {};\n');
    writeFileSync(join(root, 'package.json'), '{}\n');
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('is current after a build, until a source is changed, added or removed', () => {
    expect(stamp(root, 'buildIsCurrent')).toBe('false');
    stamp(root, 'writeStamp');
    expect(stamp(root, 'buildIsCurrent')).toBe('true');

    const later = new Date(Date.now() + 5000);
    utimesSync(join(root, 'src/cli/main.ts'), later, later);
    expect(stamp(root, 'buildIsCurrent')).toBe('false');
    stamp(root, 'writeStamp');

    writeFileSync(join(root, 'src/cli/extra.ts'), 'export {};\n');
    expect(stamp(root, 'buildIsCurrent')).toBe('false');
    stamp(root, 'writeStamp');
    rmSync(join(root, 'src/cli/extra.ts'));
    expect(stamp(root, 'buildIsCurrent')).toBe('false');
  });

  it('ignores what the build does not read', () => {
    stamp(root, 'writeStamp');
    mkdirSync(join(root, 'var'));
    writeFileSync(join(root, 'var/run.log'), 'x');
    writeFileSync(join(root, 'README.md'), 'x');
    expect(stamp(root, 'buildIsCurrent')).toBe('true');
  });

  it('bin/ambient.mjs runs the CLI (from dist/ when current, else the sources)', () => {
    const help = execFileSync(
      process.execPath,
      [join(REPO_ROOT, 'bin/ambient.mjs'), 'runs', '--help'],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
      },
    );
    expect(help).toContain('runs create --prompt <text>');
    expect(help).toContain('runs followup <run-id> --message <text>');
  });
});
