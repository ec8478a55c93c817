import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcCopies } from './etc-copies';
import { waitFor } from '../../../../../../test/support/wait';

describe('EtcCopies', () => {
  let root: string;
  let hostEtc: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ambient-etc-copies-'));
    hostEtc = join(root, 'host-etc');
    mkdirSync(join(hostEtc, 'ssl', 'certs'), { recursive: true });
    writeFileSync(join(hostEtc, 'hosts'), '127.0.0.1 localhost\n');
    writeFileSync(join(hostEtc, 'ssl', 'certs', 'ca.pem'), 'cert\n');
    symlinkSync('/usr/share/zoneinfo/Etc/UTC', join(hostEtc, 'localtime'));
    writeFileSync(join(hostEtc, 'shadow'), 'not listed\n');
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  const copies = (maxAgeMs: number) =>
    new EtcCopies(
      join(root, 'private'),
      ['hosts', 'ssl', 'localtime', 'missing'],
      { passwd: 'agent:x:1000:1000::/workspace:/bin/bash\n' },
      maxAgeMs,
      hostEtc,
    );

  it('copies the listed entries (directories whole, symlinks as they are) and the generated files, nothing else', async () => {
    const copy = (await copies(60_000).acquire())!;
    expect(readFileSync(join(copy.dir, 'hosts'), 'utf8')).toBe('127.0.0.1 localhost\n');
    expect(readFileSync(join(copy.dir, 'ssl', 'certs', 'ca.pem'), 'utf8')).toBe('cert\n');
    expect(readlinkSync(join(copy.dir, 'localtime'))).toBe('/usr/share/zoneinfo/Etc/UTC');
    expect(readFileSync(join(copy.dir, 'passwd'), 'utf8')).toContain('agent');
    expect(existsSync(join(copy.dir, 'shadow'))).toBe(false);
    expect(existsSync(join(copy.dir, 'missing'))).toBe(false);
  });

  it('hands out one copy while it is young, and a new one with the host changes once it is old', async () => {
    const young = copies(60_000);
    const [a, b] = await Promise.all([young.acquire(), young.acquire()]);
    expect(a!.dir).toBe(b!.dir);

    const aging = copies(0);
    const first = (await aging.acquire())!;
    writeFileSync(join(hostEtc, 'hosts'), '10.0.0.1 changed\n');
    const second = (await aging.acquire())!;
    expect(second.dir).not.toBe(first.dir);
    expect(readFileSync(join(second.dir, 'hosts'), 'utf8')).toBe('10.0.0.1 changed\n');
    // The superseded copy stays while a sandbox holds it, and goes once released.
    expect(readFileSync(join(first.dir, 'hosts'), 'utf8')).toBe('127.0.0.1 localhost\n');
    first.release();
    await waitUntil(() => !existsSync(first.dir));
    expect(existsSync(second.dir)).toBe(true);
  });

  it('keeps an old copy while the host has not changed its entries, and makes a new one once it has', async () => {
    const aging = copies(0);
    const first = (await aging.acquire())!;
    const unchanged = (await aging.acquire())!;
    expect(unchanged.dir).toBe(first.dir);
    // A certificate added deep in a directory, its file's size unchanged elsewhere.
    writeFileSync(join(hostEtc, 'ssl', 'certs', 'extra.pem'), 'cert\n');
    const afterAdd = (await aging.acquire())!;
    expect(afterAdd.dir).not.toBe(first.dir);
    expect(readFileSync(join(afterAdd.dir, 'ssl', 'certs', 'extra.pem'), 'utf8')).toBe('cert\n');
    // Same size, new content: its change time moved.
    writeFileSync(join(hostEtc, 'ssl', 'certs', 'ca.pem'), 'CERT\n');
    const afterEdit = (await aging.acquire())!;
    expect(afterEdit.dir).not.toBe(afterAdd.dir);
    expect(readFileSync(join(afterEdit.dir, 'ssl', 'certs', 'ca.pem'), 'utf8')).toBe('CERT\n');
    // A listed entry that appears.
    writeFileSync(join(hostEtc, 'missing'), 'now here\n');
    const afterAppear = (await aging.acquire())!;
    expect(readFileSync(join(afterAppear.dir, 'missing'), 'utf8')).toBe('now here\n');
  });

  it("removes the copies a dead process of this host left, not a live one's", async () => {
    const prefix = `etc-${hostname().replace(/[^A-Za-z0-9.]/g, '_')}-`;
    const privateRoot = join(root, 'private');
    // A pid beyond pid_max is never alive; this process's parent is.
    const dead = join(privateRoot, `${prefix}4194305-1`);
    const live = join(privateRoot, `${prefix}${process.ppid}-1`);
    const otherHost = join(privateRoot, 'etc-another-host-4194305-1');
    for (const dir of [dead, live, otherHost]) mkdirSync(dir, { recursive: true });
    await copies(60_000).acquire();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(otherHost)).toBe(true);
  });

  it('gives no copy (entries are then bound one by one) when none can be made', async () => {
    writeFileSync(join(root, 'a-file'), '');
    const broken = new EtcCopies(join(root, 'a-file', 'private'), ['hosts'], {}, 60_000, hostEtc);
    expect(await broken.acquire()).toBeNull();
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  await waitFor(async () => condition(), Boolean, { intervalMs: 10 });
}
