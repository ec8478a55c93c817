import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ExtensionSet } from '../extensions/extension-set';
import { parseWorkerOptions, WorkerOptions } from './worker-options';

const required = [
  '--api-url',
  'http://ambient.local:8080/api/v1',
  '--worker-id',
  'box-1',
  '--worker-credential',
  'k',
];

describe('parseWorkerOptions', () => {
  it('reads the flags and derives the websocket URL from the API URL', () => {
    expect(parseWorkerOptions([...required, '--max-concurrent-tasks', '3'], {})).toEqual({
      apiUrl: 'http://ambient.local:8080/api/v1',
      webSocketUrl: 'ws://ambient.local:8080/api/v1/selfhosted/worker/ws',
      workerId: 'box-1',
      credential: 'k',
      maxConcurrentTasks: 3,
      workspaceRoot: resolve('var/self-hosted-workspaces'),
      modelsFile: resolve('config/models.yaml'),
      vendorClis: { claudeBin: 'claude', codexBin: 'codex', geminiBin: 'gemini' },
      sandbox: expect.objectContaining({ backend: 'auto', network: 'none' }),
      egress: { allow: '' },
      config: expect.objectContaining({ sandbox: expect.objectContaining({ backend: 'auto' }) }),
      extensions: expect.any(ExtensionSet),
    });
  });

  it('reads AMBIENT_EGRESS_ALLOW as the server does', () => {
    const options = parseWorkerOptions(required, { AMBIENT_EGRESS_ALLOW: '10.0.0.0/8' });
    expect(options).toMatchObject({ egress: { allow: '10.0.0.0/8' } });
    expect(() => parseWorkerOptions(required, { AMBIENT_EGRESS_ALLOW: 'a b' })).toThrow(
      /^AMBIENT_EGRESS_ALLOW: "a b" is not a block/,
    );
  });

  it('reads the sandbox settings as the server does, --sandbox naming the backend', () => {
    const options = parseWorkerOptions([...required, '--sandbox', 'bubblewrap'], {
      AMBIENT_SANDBOX_MEMORY_MB: '256',
    });
    expect(options).toMatchObject({ sandbox: { backend: 'bubblewrap', memoryMb: 256 } });
    expect(() => parseWorkerOptions([...required, '--sandbox', 'chroot'], {})).toThrow(
      /--sandbox: must be one of auto, docker, bubblewrap, process/,
    );
  });

  it('takes a clone base of its own (URL as given, directory made absolute) and the vendor CLIs', () => {
    expect(
      parseWorkerOptions([...required, '--git-url-base', 'https://git.internal/'], {}),
    ).toMatchObject({ gitUrlBase: 'https://git.internal/' });
    expect(
      parseWorkerOptions([...required, '--git-url-base', 'git@github.com:'], {}),
    ).toMatchObject({ gitUrlBase: 'git@github.com:' });
    const fromEnv = parseWorkerOptions(required, {
      AMBIENT_GIT_URL_BASE: 'mirrors',
      AMBIENT_CLAUDE_BIN: '/opt/claude',
      AMBIENT_GEMINI_BIN: '',
    });
    expect(fromEnv).toMatchObject({
      gitUrlBase: resolve('mirrors'),
      vendorClis: { claudeBin: '/opt/claude', codexBin: 'codex', geminiBin: 'gemini' },
    });
  });

  it('takes a worker credential, from the flag or AMBIENT_WORKER_CREDENTIAL', () => {
    const flags = ['--api-url', 'http://h/api/v1', '--worker-id', 'w'];
    expect(parseWorkerOptions([...flags, '--worker-credential', 'ambw_flag'], {})).toMatchObject({
      credential: 'ambw_flag',
    });
    expect(parseWorkerOptions(flags, { AMBIENT_WORKER_CREDENTIAL: 'ambw_env' })).toMatchObject({
      credential: 'ambw_env',
    });
  });

  it('keeps a path prefix and uses wss for https', () => {
    const options = parseWorkerOptions(
      [
        '--api-url',
        'https://example.com/ambient/api/v1/',
        '--worker-id',
        'w',
        '--worker-credential',
        'k',
      ],
      {},
    );
    expect(options).toMatchObject({
      apiUrl: 'https://example.com/ambient/api/v1',
      webSocketUrl: 'wss://example.com/ambient/api/v1/selfhosted/worker/ws',
    });
  });

  it('falls back to environment variables', () => {
    const options = parseWorkerOptions([], {
      AMBIENT_API_URL: 'http://h/api/v1',
      AMBIENT_WORKER_ID: 'env-box',
      AMBIENT_WORKER_CREDENTIAL: 'from-env',
      AMBIENT_MODELS_FILE: '/etc/models.yaml',
    });
    expect(options).toMatchObject({
      workerId: 'env-box',
      credential: 'from-env',
      modelsFile: '/etc/models.yaml',
      maxConcurrentTasks: 0,
    });
  });

  it.each([
    [['--worker-id', 'w', '--worker-credential', 'k'], '--api-url is required'],
    [
      ['--api-url', 'ftp://h', '--worker-id', 'w', '--worker-credential', 'k'],
      '--api-url: must start with http:// or https://',
    ],
    [
      ['--api-url', 'http://h', '--worker-id', 'warp-1', '--worker-credential', 'k'],
      '--worker-id: ids starting with "warp" are reserved',
    ],
    [['--api-url', 'http://h', '--worker-id', 'w'], '--worker-credential is required'],
    [
      ['--api-url', 'http://h', '--worker-id', 'w', '--api-key', 'k'],
      '--api-key: an API key no longer registers a worker; pass --worker-credential',
    ],
    [
      [...required, '--max-concurrent-tasks', 'lots'],
      '--max-concurrent-tasks: must be a whole number',
    ],
    [[...required, '--bogus'], "Unknown option '--bogus'"],
  ])('refuses %j', (argv, message) => {
    expect(() => parseWorkerOptions(argv, {})).toThrow(message);
  });

  it('loads the extensions --extensions (or AMBIENT_EXTENSIONS) names: their harnesses and sandbox backends', () => {
    const fixture = 'test/fixtures/extensions/traced-worker.js';
    const names = (options: WorkerOptions | 'help') =>
      options === 'help' ? [] : options.extensions.extensions.map((e) => e.name);
    expect(names(parseWorkerOptions(required, {}))).toEqual(['ambient']);
    const options = parseWorkerOptions(
      [...required, '--extensions', `examples/extensions/hello-ambient,${fixture}`],
      { AMBIENT_SANDBOX: 'traced-process' },
    );
    expect(names(options)).toEqual(['ambient', 'hello-ambient', 'traced-worker']);
    expect(options).toMatchObject({ sandbox: { backend: 'traced-process' } });
    expect(names(parseWorkerOptions(required, { AMBIENT_EXTENSIONS: fixture }))).toEqual([
      'ambient',
      'traced-worker',
    ]);
    // Without the extension, its backend is no choice.
    expect(() => parseWorkerOptions([...required, '--sandbox', 'traced-process'], {})).toThrow(
      '--sandbox: must be one of auto, docker, bubblewrap, process (got "traced-process")',
    );
  });

  it('refuses an extension it cannot load, or a setting of one that is not of its type', () => {
    expect(() =>
      parseWorkerOptions([...required, '--extensions', 'examples/extensions/nope'], {}),
    ).toThrow(/^AMBIENT_EXTENSIONS: cannot load "examples\/extensions\/nope": /);
    const dir = mkdtempSync(join(tmpdir(), 'ambient-worker-extensions-'));
    try {
      const module = join(dir, 'counted.js');
      writeFileSync(
        module,
        "module.exports = { name: 'counted', settings: [{ name: 'COUNTED_MAX', type: 'number', description: 'd' }] };",
      );
      expect(() =>
        parseWorkerOptions([...required, '--extensions', module], { COUNTED_MAX: 'many' }),
      ).toThrow('COUNTED_MAX: must be a number (got "many"; a setting of extension counted)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers --help', () => {
    expect(parseWorkerOptions(['--help'], {})).toBe('help');
  });
});
