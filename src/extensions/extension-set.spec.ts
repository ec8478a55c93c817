import { loadConfig } from '../config/app-config';
import { HarnessRegistry } from '../modules/workers/harness/harness-registry';
import type { Harness } from '../modules/workers/harness/harness.types';
import { builtinExtension } from './builtin.extension';
import { ExtensionHost, ExtensionSet } from './extension-set';
import type { AmbientExtension } from './extension.types';

const harness = (type: string): Harness => ({
  type,
  run: () => Promise.reject(new Error('not run here')),
});

describe('ExtensionSet', () => {
  const config = loadConfig({ AMBIENT_CONFIG_FILE: 'config/default.yaml' });

  it('registers the built-ins through the built-in extension, first, like any other', () => {
    const set = ExtensionSet.of([{ name: 'ext', harnesses: [harness('hello')] }]);
    expect(set.extensions.map((e) => e.name)).toEqual(['ambient', 'ext']);
    expect(set.sandboxBackendRegistry().names()).toEqual(['docker', 'bubblewrap', 'process']);
    expect(builtinExtension.signatureVerifiers?.[0].scheme).toBe('standard_webhooks');
    const harnesses = new HarnessRegistry().registerAll(set.harnesses(), { config });
    expect(harnesses.names()).toEqual(['oz', 'claude', 'gemini', 'codex', 'hello']);
    expect(harnesses.ownerOf('hello')).toBe('ext');
  });

  it("hands each point's contributions to its owner, with the contributing extension's name", () => {
    const set = ExtensionSet.of([
      {
        name: 'rival',
        sandboxBackends: [{ name: 'docker', isolated: true, create: () => ({}) as never }],
      },
    ]);
    expect(set.sandboxBackends().map((c) => c.owner)).toEqual(['ambient', 'rival']);
    expect(set.authStrategies().map((c) => c.owner)).toEqual(['ambient']);
    expect(() => set.sandboxBackendRegistry()).toThrow(
      'extension rival: sandbox backend "docker" is already registered by ambient',
    );
  });
});

describe('ExtensionSet settings and lifecycle', () => {
  const config = loadConfig({ AMBIENT_CONFIG_FILE: 'config/default.yaml' });

  /** An extension recording its lifecycle in `events`. */
  const recorded = (name: string, events: string[], failInit = false): AmbientExtension => ({
    name,
    settings: [
      { name: `${name.toUpperCase()}_LEVEL`, type: 'number', default: 1, description: 'd' },
    ],
    init: ({ settings, log, config: seen }) => {
      events.push(`init ${name} ${JSON.stringify(settings)} ${seen === config}`);
      log.info('started');
      if (failInit) throw new Error('no connection');
    },
    destroy: () => {
      events.push(`destroy ${name}`);
      if (name === 'b') throw new Error('already gone');
    },
  });

  const host = (lines: string[]): ExtensionHost => ({
    config,
    logFor: (name) => ({
      info: (m) => lines.push(`${name} info ${m}`),
      warn: (m) => lines.push(`${name} warn ${m}`),
      error: (m) => lines.push(`${name} error ${m}`),
    }),
  });

  it('inits each extension once for all the applications of a process, destroys in reverse after the last', async () => {
    const events: string[] = [];
    const lines: string[] = [];
    const set = ExtensionSet.of([recorded('a', events), recorded('b', events)], { A_LEVEL: '7' });
    await Promise.all([set.start(host(lines)), set.start(host(lines))]);
    expect(events).toEqual(['init a {"A_LEVEL":7} true', 'init b {"B_LEVEL":1} true']);
    expect(lines).toEqual(['a info started', 'b info started']);
    await set.stop();
    expect(events).toHaveLength(2);
    await set.stop();
    // b's destroy failed: logged, and a's still ran.
    expect(events.slice(2)).toEqual(['destroy b', 'destroy a']);
    expect(lines).toContain('b error destroy failed: already gone');
    await set.stop();
    expect(events).toHaveLength(4);
  });

  it('fails start naming the extension whose init failed, after destroying those already started', async () => {
    const events: string[] = [];
    const set = ExtensionSet.of([recorded('a', events), recorded('c', events, true)], {});
    await expect(set.start(host([]))).rejects.toThrow('extension c: init failed: no connection');
    expect(events.map((e) => e.split(' ').slice(0, 2).join(' '))).toEqual([
      'init a',
      'init c',
      'destroy a',
    ]);
  });

  it('hands factories their extension’s settings; refuses a setting two extensions declare', () => {
    const seen: unknown[] = [];
    const set = ExtensionSet.of(
      [
        {
          name: 'ext',
          settings: [{ name: 'EXT_MARK', type: 'string', description: 'd' }],
          harnesses: ({ settings }) => {
            seen.push(settings);
            return [harness('marked')];
          },
        },
      ],
      { EXT_MARK: 'm' },
    );
    new HarnessRegistry().registerAll(set.harnesses(), { config });
    expect(seen).toEqual([{ EXT_MARK: 'm' }]);
    const twice = { name: 'X_MARK', type: 'string', description: 'd' } as const;
    expect(() =>
      ExtensionSet.of([
        { name: 'one', settings: [twice] },
        { name: 'two', settings: [twice] },
      ]),
    ).toThrow('extension two: setting X_MARK is already declared by one');
  });
});
