import { ApiError } from '../common/errors/api-error';
import type { Harness } from '../modules/execution/harness/harness.types';

/**
 * The harnesses of this application (built-in and extension ones). Finds the one a run asked
 * for by `config.harness.type` (absent means the built-in `oz`).
 */
export class HarnessRegistry {
  private readonly byType = new Map<string, Harness>();

  constructor(registrations: readonly { owner: string; harness: Harness }[]) {
    const owners = new Map<string, string>();
    for (const { owner, harness } of registrations) {
      const earlier = owners.get(harness.type);
      if (earlier !== undefined) {
        throw new Error(
          `extension ${owner}: harness type "${harness.type}" is already registered by ${earlier}`,
        );
      }
      owners.set(harness.type, owner);
      this.byType.set(harness.type, harness);
    }
  }

  find(type: string | undefined): Harness | undefined {
    return this.byType.get(type ?? 'oz');
  }

  get types(): string[] {
    return [...this.byType.keys()];
  }

  /** Refuses a harness type no extension registered, naming the request field. */
  assertKnown(type: string | undefined, field: string): void {
    if (type !== undefined && !this.byType.has(type)) {
      throw ApiError.invalid(
        field,
        `must be one of the following values: ${this.types.join(', ')}`,
      );
    }
  }
}
