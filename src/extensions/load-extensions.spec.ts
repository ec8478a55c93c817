import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkedExtension, loadExtensionModules } from './load-extensions';

describe('checkedExtension', () => {
  it('needs an object with a name', () => {
    expect(() => checkedExtension(null)).toThrow('its default export is not an extension object');
    expect(() => checkedExtension({ name: ' ' })).toThrow('the extension has no name');
  });

  it("checks each point's list with the check of the module that owns the point", () => {
    expect(() => checkedExtension({ name: 'x', harnesses: [{ type: 'Bad' }] })).toThrow(
      'a harness needs a type of 1-64 lower-case letters',
    );
    expect(() => checkedExtension({ name: 'x', sandboxBackends: {} })).toThrow(
      '"sandboxBackends" must be a list',
    );
    expect(() =>
      checkedExtension({ name: 'x', signatureVerifiers: [{ scheme: 'ok', verify: () => null }] }),
    ).toThrow('signature scheme "ok" has no checkSecret()');
    expect(() => checkedExtension({ name: 'x', authStrategies: {} })).toThrow(
      '"authStrategies" must be a list or a function',
    );
    expect(() => checkedExtension({ name: 'x', authStrategies: [{ name: 'Bad Name' }] })).toThrow(
      'an auth strategy needs a name of 1-64 lower-case letters',
    );
    expect(() => checkedExtension({ name: 'x', authStrategies: [{ name: 'ok' }] })).toThrow(
      'auth strategy "ok" has no authenticate()',
    );
    expect(checkedExtension({ name: 'x', authStrategies: () => [] }).name).toBe('x');
  });
});

describe('loadExtensionModules', () => {
  it("loads each module's default export, and names the entry it cannot load", () => {
    const dir = mkdtempSync(join(tmpdir(), 'ambient-extensions-'));
    try {
      writeFileSync(join(dir, 'a.js'), "module.exports = { name: 'a' };");
      writeFileSync(join(dir, 'b.js'), "exports.default = { name: 'b' };");
      expect(loadExtensionModules(' a.js , b.js,', dir).map((e) => e.name)).toEqual(['a', 'b']);
      expect(loadExtensionModules(undefined, dir)).toEqual([]);
      expect(() => loadExtensionModules('a.js,missing.js', dir)).toThrow(
        /^AMBIENT_EXTENSIONS: cannot load "missing.js": /,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
