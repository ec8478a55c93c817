import { Registry } from './registry';
import { fillRegistryEnums, registryEnum } from './registry-openapi';

interface Tool {
  name: string;
  run?: () => void;
}

const tools = () =>
  new Registry<Tool>('tool', (tool) => tool.name, {
    check: (entry) => {
      if (typeof (entry as Tool).run !== 'function') throw new Error('a tool needs run()');
    },
    reserved: { auto: 'ambient' },
  });
const tool = (name: string): Tool => ({ name, run: () => undefined });

describe('Registry', () => {
  it('gets and lists what was registered, in registration order, with its owner', () => {
    const registry = tools().register('ambient', tool('b')).register('ext', tool('a'));
    expect(registry.names()).toEqual(['b', 'a']);
    expect(registry.list().map((t) => t.name)).toEqual(['b', 'a']);
    expect(registry.get('a')?.name).toBe('a');
    expect(registry.get('c')).toBeUndefined();
    expect(registry.has('b')).toBe(true);
    expect(registry.ownerOf('a')).toBe('ext');
  });

  it('refuses a name registered twice or reserved, naming both contributors', () => {
    const registry = tools().register('ambient', tool('same'));
    expect(() => registry.register('corp', tool('same'))).toThrow(
      'extension corp: tool "same" is already registered by ambient',
    );
    expect(() => registry.register('corp', tool('auto'))).toThrow(
      'extension corp: tool "auto" is already registered by ambient',
    );
    // Only the registry's own names count, not an object's inherited keys.
    expect(() => registry.register('corp', tool('constructor'))).not.toThrow();
  });

  it("prefixes an entry's failed check with its contributor", () => {
    expect(() => tools().register('corp', { name: 'x' })).toThrow(
      'extension corp: a tool needs run()',
    );
  });

  it('registers contributions in order, calling those that are functions with the context', () => {
    const registry = tools().registerAll<{ suffix: string }>(
      [
        { owner: 'ambient', entries: [tool('one')] },
        { owner: 'ext', entries: ({ suffix }) => [tool(`two-${suffix}`)] },
      ],
      { suffix: 'ctx' },
    );
    expect(registry.names()).toEqual(['one', 'two-ctx']);
    expect(() =>
      tools().registerAll(
        [{ owner: 'bad', entries: () => 'no list' as unknown as Tool[] }],
        undefined,
      ),
    ).toThrow('extension bad: its tool factory must return a list');
  });
});

describe('registry enums in the OpenAPI document', () => {
  it("replaces each marker with its registry's names, and refuses a marker it has no names for", () => {
    const document = {
      schemas: { A: { properties: { kind: { ...registryEnum('tool'), description: 'd' } } } },
    };
    fillRegistryEnums(document, { tool: ['b', 'a'] });
    expect(document.schemas.A.properties.kind).toEqual({
      type: String,
      description: 'd',
      enum: ['b', 'a'],
    });
    expect(() => fillRegistryEnums({ x: registryEnum('tools') }, { tool: [] })).toThrow(
      'OpenAPI: no registry names for x-ambient-registry "tools"',
    );
  });
});
