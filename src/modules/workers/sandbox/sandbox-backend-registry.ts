import { Contribution, isEntryName, Registry } from '../../../common/registry/registry';
import type { SandboxBackendFactory } from './sandbox.types';

export type SandboxBackendContribution = Contribution<SandboxBackendFactory>;

/** The Nest token of the sandbox backend contributions (Ambient's and the extensions'), in order. */
export const SANDBOX_BACKEND_CONTRIBUTIONS = Symbol('SANDBOX_BACKEND_CONTRIBUTIONS');

/**
 * The sandbox backends AMBIENT_SANDBOX may name, built-ins first (docker, bubblewrap, process).
 * `auto` is Ambient's choice among them, so no backend may take that name.
 */
export class SandboxBackendRegistry extends Registry<SandboxBackendFactory> {
  constructor() {
    super('sandbox backend', (factory) => factory.name, {
      check: checkSandboxBackend,
      reserved: { auto: 'ambient' },
    });
  }

  /** Start-up's check of AMBIENT_SANDBOX (read before extensions load): `auto` or a registered name. */
  checkSetting(backend: string): void {
    if (backend === 'auto' || this.has(backend)) return;
    const choices = ['auto', ...this.names()].join(', ');
    throw new Error(`AMBIENT_SANDBOX: must be one of ${choices} (got "${backend}")`);
  }
}

export function checkSandboxBackend(factory: unknown): void {
  const f = factory as { name?: unknown; isolated?: unknown; create?: unknown } | null;
  if (!isEntryName(f?.name, 64)) {
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
