import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ConfigError, loadConfig } from './app-config';
import { describeCreatedKeys, provideKeys, writeOnce } from './key-files';
import { TS_REGISTER } from '../../test/support/ts-register-path';

const ROOT = resolve(__dirname, '../..');

describe('provideKeys', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'ambient-keys-')), 'keys');
    env = { AMBIENT_CONFIG_FILE: 'config/default.yaml', AMBIENT_KEY_DIR: dir };
  });
  afterEach(() => rmSync(dirname(dir), { recursive: true, force: true }));

  const modeOf = (path: string) => statSync(path).mode & 0o777;

  it('creates both key files (0600 in a 0700 directory) on a first start, then reuses them', () => {
    const first = loadConfig(env);
    const origins = provideKeys(first, env, 'create');
    expect(origins.map((o) => o.source)).toEqual(['created', 'created']);
    expect(origins.map((o) => o.path)).toEqual([
      join(dir, 'secrets.key'),
      join(dir, 'url-signing.key'),
    ]);
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, 'secrets.key'))).toBe(0o600);
    expect(modeOf(join(dir, 'url-signing.key'))).toBe(0o600);
    expect(first.secretsKey).toHaveLength(32);
    expect(first.blobs.signingKey).toBe(readFileSync(join(dir, 'url-signing.key'), 'utf8').trim());
    // The file holds what AMBIENT_SECRETS_KEY accepts, so replicas can be given its contents.
    const secretsText = readFileSync(join(dir, 'secrets.key'), 'utf8');
    expect(loadConfig({ ...env, AMBIENT_SECRETS_KEY: secretsText }).secretsKey).toEqual(
      first.secretsKey,
    );

    const second = loadConfig(env);
    expect(provideKeys(second, env, 'create').map((o) => o.source)).toEqual(['file', 'file']);
    expect(second.secretsKey).toEqual(first.secretsKey);
    expect(second.blobs.signingKey).toBe(first.blobs.signingKey);
    expect(readdirSync(dir).sort()).toEqual(['secrets.key', 'url-signing.key']);
  });

  it('says once where the created files are and that replicas need the same values', () => {
    const origins = provideKeys(loadConfig(env), env, 'create');
    const line = describeCreatedKeys(origins)!;
    expect(line).toContain(join(dir, 'secrets.key'));
    expect(line).toContain(join(dir, 'url-signing.key'));
    expect(line).toMatch(/Replicas on other machines need the same values/);
    expect(line).not.toContain('\n');
    expect(describeCreatedKeys(provideKeys(loadConfig(env), env, 'create'))).toBeNull();
  });

  it('leaves keys set in the environment alone and writes nothing for them', () => {
    const explicit = {
      ...env,
      AMBIENT_SECRETS_KEY: 'ab'.repeat(32),
      AMBIENT_URL_SIGNING_KEY: 'an-explicit-signing-key',
    };
    const config = loadConfig(explicit);
    expect(provideKeys(config, explicit, 'create').map((o) => o.source)).toEqual(['env', 'env']);
    expect(config.secretsKey).toEqual(Buffer.from('ab'.repeat(32), 'hex'));
    expect(config.blobs.signingKey).toBe('an-explicit-signing-key');
    expect(existsSync(dir)).toBe(false);
  });

  it('only reads existing files in read mode (the CLI): nothing is created', () => {
    const none = loadConfig(env);
    expect(provideKeys(none, env, 'read').map((o) => o.source)).toEqual(['none', 'none']);
    expect(none.secretsKey).toBeUndefined();
    expect(existsSync(dir)).toBe(false);

    const server = loadConfig(env);
    provideKeys(server, env, 'create');
    const cli = loadConfig(env);
    expect(provideKeys(cli, env, 'read').map((o) => o.source)).toEqual(['file', 'file']);
    expect(cli.secretsKey).toEqual(server.secretsKey);
  });

  it('refuses to start in production without explicit keys, naming the missing ones', () => {
    const production = { ...env, NODE_ENV: 'production' };
    const stop = (extra: NodeJS.ProcessEnv) => () =>
      provideKeys(loadConfig({ ...production, ...extra }), { ...production, ...extra }, 'create');
    expect(stop({})).toThrow(ConfigError);
    expect(stop({})).toThrow(
      /^AMBIENT_SECRETS_KEY, AMBIENT_URL_SIGNING_KEY: required when NODE_ENV=production/,
    );
    expect(stop({ AMBIENT_SECRETS_KEY: 'ab'.repeat(32) })).toThrow(
      /^AMBIENT_URL_SIGNING_KEY: required when NODE_ENV=production/,
    );
    expect(
      stop({ AMBIENT_SECRETS_KEY: 'ab'.repeat(32), AMBIENT_URL_SIGNING_KEY: 'k'.repeat(32) }),
    ).not.toThrow();
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a key file others may read, naming the file and the fix', () => {
    provideKeys(loadConfig(env), env, 'create');
    chmodSync(join(dir, 'secrets.key'), 0o644);
    expect(() => provideKeys(loadConfig(env), env, 'create')).toThrow(
      `AMBIENT_SECRETS_KEY: key file ${join(dir, 'secrets.key')} has mode 0644, others may read it; run chmod 600`,
    );
  });

  it.each([
    ['secrets.key', 'not a key', /^AMBIENT_SECRETS_KEY: key file .*secrets\.key: must be 32 bytes/],
    ['url-signing.key', 'short', /^AMBIENT_URL_SIGNING_KEY: key file .*: must be at least 16/],
    [
      'url-signing.key',
      'ambient-dev-url-signing-key',
      /^AMBIENT_URL_SIGNING_KEY: key file .*: is the old well-known development key/,
    ],
  ])('refuses %s holding %j', (file, text, message) => {
    provideKeys(loadConfig(env), env, 'create');
    writeFileSync(join(dir, file), text, { mode: 0o600 });
    expect(() => provideKeys(loadConfig(env), env, 'create')).toThrow(message);
  });

  it('names the setting when the key directory cannot be created or read', () => {
    // A dangling symlink: nothing to read, and mkdir cannot create it (even as root).
    const dangling = join(dir, '..', 'dangling');
    symlinkSync(join(dir, '..', 'nowhere', 'deeper'), dangling);
    const blocked = { ...env, AMBIENT_KEY_DIR: dangling };
    expect(() => provideKeys(loadConfig(blocked), blocked, 'create')).toThrow(
      /^AMBIENT_SECRETS_KEY: cannot create key file .*dangling\/secrets\.key \(ENOENT.*\); set AMBIENT_SECRETS_KEY, or AMBIENT_KEY_DIR to a writable directory$/,
    );
    const file = join(dir, '..', 'not-a-directory');
    writeFileSync(file, '');
    const unreadable = { ...env, AMBIENT_KEY_DIR: join(file, 'keys') };
    expect(() => provideKeys(loadConfig(unreadable), unreadable, 'read')).toThrow(
      /^AMBIENT_SECRETS_KEY: cannot read key file .*not-a-directory\/keys\/secrets\.key \(ENOTDIR/,
    );
  });

  it('refuses the old well-known signing key in the environment', () => {
    expect(() =>
      loadConfig({ ...env, AMBIENT_URL_SIGNING_KEY: 'ambient-dev-url-signing-key' }),
    ).toThrow(/^AMBIENT_URL_SIGNING_KEY: is the old well-known development key/);
  });
});

describe('writeOnce', () => {
  let scratch: string;
  afterEach(() => rmSync(scratch, { recursive: true, force: true }));

  it('keeps an existing file and leaves no temporary file behind', () => {
    const dir = (scratch = mkdtempSync(join(tmpdir(), 'ambient-once-')));
    const path = join(dir, 'k');
    expect(writeOnce(path, 'winner\n')).toBe(true);
    expect(writeOnce(path, 'loser\n')).toBe(false);
    expect(readFileSync(path, 'utf8')).toBe('winner\n');
    expect(readdirSync(dir)).toEqual(['k']);
  });

  it('gives processes starting together on one machine the same keys', async () => {
    // Several processes walk the same fresh key directories in the same order, so they contend for
    // each one at nearly the same moment; every directory must end with one creator and one key.
    const root = (scratch = mkdtempSync(join(tmpdir(), 'ambient-race-')));
    const rounds = 40;
    const script = [
      "const { provideKeys } = require('./src/config/key-files');",
      "process.stdout.write('ready\\n');",
      "process.stdin.once('data', () => {",
      '  const results = [];',
      `  for (let i = 0; i < ${rounds}; i++) {`,
      "    const config = { keys: { dir: process.env.RACE_ROOT + '/' + i }, blobs: {} };",
      "    const sources = provideKeys(config, {}, 'create').map((o) => o.source);",
      "    results.push({ sources, secrets: config.secretsKey.toString('hex'), signing: config.blobs.signingKey });",
      '  }',
      "  process.stdout.write(JSON.stringify(results) + '\\n');",
      '  process.exit(0);',
      '});',
    ].join('\n');
    const children = Array.from({ length: 4 }, () =>
      spawn(process.execPath, ['-r', TS_REGISTER, '-e', script], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, RACE_ROOT: root },
        stdio: ['pipe', 'pipe', 'inherit'],
      }),
    );
    const lines = children.map((child) => createInterface({ input: child.stdout! }));
    const next = (index: number) =>
      new Promise<string>((resolveLine, reject) => {
        lines[index].once('line', resolveLine);
        lines[index].once('close', () =>
          reject(new Error(`process ${index} ended without a line`)),
        );
      });
    // Every process is loaded before any looks for a file: then all go at once.
    const ready = await Promise.all(children.map((_child, index) => next(index)));
    expect(ready).toEqual(children.map(() => 'ready'));
    const outputs = children.map((_child, index) => next(index));
    for (const child of children) child.stdin!.end('go\n');
    const reports = (await Promise.all(outputs)).map(
      (line) => JSON.parse(line) as { sources: string[]; secrets: string; signing: string }[],
    );
    for (let round = 0; round < rounds; round++) {
      const seen = reports.map((report) => report[round]);
      const creators = [0, 1].map((key) => seen.filter((r) => r.sources[key] === 'created').length);
      expect({ round, creators, secrets: new Set(seen.map((r) => r.secrets)).size }).toEqual({
        round,
        creators: [1, 1],
        secrets: 1,
      });
      expect(new Set(seen.map((r) => r.signing)).size).toBe(1);
      const dir = join(root, String(round));
      expect(readFileSync(join(dir, 'url-signing.key'), 'utf8').trim()).toBe(seen[0].signing);
      expect(readdirSync(dir).sort()).toEqual(['secrets.key', 'url-signing.key']);
    }
  }, 60_000);
});
