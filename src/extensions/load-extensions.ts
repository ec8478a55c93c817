import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { AmbientExtension } from './extension.types';

/**
 * The extensions named by AMBIENT_EXTENSIONS (`<module path or package>,…`): a path relative to
 * the working directory when one exists there, else a package resolved from it. Each module's
 * default export (or its `module.exports`) is the extension. Throws one line naming the entry.
 */
export function loadExtensionModules(
  setting: string | undefined,
  cwd = process.cwd(),
): AmbientExtension[] {
  const entries = (setting ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const load = createRequire(join(cwd, 'ambient-extensions.js'));
  return entries.map((entry) => {
    try {
      const path = resolve(cwd, entry);
      const loaded: unknown = load(existsSync(path) ? path : entry);
      return checkedExtension(defaultExport(loaded));
    } catch (err) {
      const reason = ((err as Error).message || String(err)).split('\n')[0];
      throw new Error(`AMBIENT_EXTENSIONS: cannot load "${entry}": ${reason}`);
    }
  });
}

function defaultExport(loaded: unknown): unknown {
  if (typeof loaded === 'object' && loaded !== null && 'default' in loaded) {
    return (loaded as { default: unknown }).default;
  }
  return loaded;
}

/** What start-up can check before the registries use it; each point checks the rest itself. */
export function checkedExtension(value: unknown): AmbientExtension {
  if (typeof value !== 'object' || value === null) {
    throw new Error('its default export is not an extension object');
  }
  const extension = value as Record<string, unknown>;
  if (typeof extension.name !== 'string' || extension.name.trim() === '') {
    throw new Error('the extension has no name');
  }
  const { harnesses, signatureVerifiers, sandboxBackends, authStrategies } = extension;
  if (sandboxBackends !== undefined) {
    if (!Array.isArray(sandboxBackends)) throw new Error('"sandboxBackends" must be a list');
    sandboxBackends.forEach(checkSandboxBackend);
  }
  if (harnesses !== undefined && typeof harnesses !== 'function') {
    if (!Array.isArray(harnesses)) throw new Error('"harnesses" must be a list or a function');
    harnesses.forEach(checkHarness);
  }
  if (signatureVerifiers !== undefined) {
    if (!Array.isArray(signatureVerifiers)) throw new Error('"signatureVerifiers" must be a list');
    signatureVerifiers.forEach(checkVerifier);
  }
  if (authStrategies !== undefined && typeof authStrategies !== 'function') {
    if (!Array.isArray(authStrategies)) {
      throw new Error('"authStrategies" must be a list or a function');
    }
    authStrategies.forEach(checkAuthStrategy);
  }
  return value as AmbientExtension;
}

const NAME = /^[a-z0-9][a-z0-9_.-]*$/;

export function checkHarness(harness: unknown): void {
  const h = harness as { type?: unknown; run?: unknown } | null;
  if (typeof h?.type !== 'string' || !NAME.test(h.type) || h.type.length > 64) {
    throw new Error('a harness needs a type of 1-64 lower-case letters, digits, "_", "." or "-"');
  }
  if (typeof h.run !== 'function') throw new Error(`harness "${h.type}" has no run()`);
}

export function checkVerifier(verifier: unknown): void {
  const v = verifier as Record<string, unknown> | null;
  const scheme = v?.scheme;
  // The webhooks table stores the scheme in 32 characters.
  if (typeof scheme !== 'string' || !NAME.test(scheme) || scheme.length > 32) {
    throw new Error(
      'a signature verifier needs a scheme of 1-32 lower-case letters, digits, "_", "." or "-"',
    );
  }
  for (const fn of ['verify', 'checkSecret']) {
    if (typeof v?.[fn] !== 'function')
      throw new Error(`signature scheme "${scheme}" has no ${fn}()`);
  }
  if (!Array.isArray(v?.credentialHeaders)) {
    throw new Error(`signature scheme "${scheme}" has no credentialHeaders list`);
  }
}

export function checkSandboxBackend(factory: unknown): void {
  const f = factory as { name?: unknown; isolated?: unknown; create?: unknown } | null;
  if (typeof f?.name !== 'string' || !NAME.test(f.name) || f.name.length > 64) {
    throw new Error(
      'a sandbox backend needs a name of 1-64 lower-case letters, digits, "_", "." or "-"',
    );
  }
  if (typeof f.isolated !== 'boolean')
    throw new Error(`sandbox backend "${f.name}" has no isolated flag`);
  if (typeof f.create !== 'function')
    throw new Error(`sandbox backend "${f.name}" has no create()`);
  const probe = (factory as { probe?: unknown }).probe;
  if (probe !== undefined && typeof probe !== 'function')
    throw new Error(`sandbox backend "${f.name}": probe must be a function`);
}

export function checkAuthStrategy(strategy: unknown): void {
  const s = strategy as { name?: unknown; authenticate?: unknown } | null;
  if (typeof s?.name !== 'string' || !NAME.test(s.name) || s.name.length > 64) {
    throw new Error(
      'an auth strategy needs a name of 1-64 lower-case letters, digits, "_", "." or "-"',
    );
  }
  if (typeof s.authenticate !== 'function') {
    throw new Error(`auth strategy "${s.name}" has no authenticate()`);
  }
}
