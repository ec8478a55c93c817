import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { checkHarness } from '../modules/workers/harness/harness-registry';
import { checkSandboxBackend } from '../modules/workers/sandbox/sandbox-backend-registry';
import { checkAuthStrategy } from '../modules/teams/auth/auth-strategy-registry';
import { checkVerifier } from '../modules/webhooks/verifiers/signature-verifier-registry';
import { checkSettingDeclarations } from './extension-settings';
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

/**
 * What start-up can check before the registries use it (each point's own check of its entries);
 * entries a function returns are checked when the point's registry takes them.
 */
export function checkedExtension(value: unknown): AmbientExtension {
  if (typeof value !== 'object' || value === null) {
    throw new Error('its default export is not an extension object');
  }
  const extension = value as Record<string, unknown>;
  if (typeof extension.name !== 'string' || extension.name.trim() === '') {
    throw new Error('the extension has no name');
  }
  const { harnesses, signatureVerifiers, sandboxBackends, authStrategies } = extension;
  if (extension.settings !== undefined) checkSettingDeclarations(extension.settings);
  for (const hook of ['init', 'destroy']) {
    if (extension[hook] !== undefined && typeof extension[hook] !== 'function') {
      throw new Error(`"${hook}" must be a function`);
    }
  }
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
