import type { AppConfig } from '../../../config/app-config';
import { Contribution, isEntryName, Registry } from '../../../common/registry/registry';
import type { Harness } from './harness.types';

/** What a contribution that is a function receives: the application's configuration. */
export interface HarnessFactoryContext {
  config: AppConfig;
}

export type HarnessContribution = Contribution<Harness, HarnessFactoryContext>;

/** The Nest token of the harness contributions (Ambient's and the extensions'), in order. */
export const HARNESS_CONTRIBUTIONS = Symbol('HARNESS_CONTRIBUTIONS');

/**
 * The harnesses of this application (built-in and extension ones) by `type`: the executor finds
 * the one a run asked for by `config.harness.type` (absent means the built-in `oz`).
 */
export class HarnessRegistry extends Registry<Harness> {
  constructor() {
    super('harness type', (harness) => harness.type, { check: checkHarness });
  }

  find(type: string | undefined): Harness | undefined {
    return this.get(type ?? 'oz');
  }
}

export function checkHarness(harness: unknown): void {
  const h = harness as { type?: unknown; run?: unknown } | null;
  if (!isEntryName(h?.type, 64)) {
    throw new Error('a harness needs a type of 1-64 lower-case letters, digits, "_", "." or "-"');
  }
  if (typeof h.run !== 'function') throw new Error(`harness "${h.type}" has no run()`);
}
