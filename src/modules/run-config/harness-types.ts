import { ApiError } from '../../common/errors/api-error';

/**
 * The harness types this application runs (`config.harness.type`): the vocabulary validation
 * needs, without the harnesses. The workers module provides it from its harness registry (built-in
 * and extension harnesses), so what validates runs, schedules and factory definitions never
 * depends on what executes them.
 */
export class HarnessTypes {
  constructor(private readonly registered: { names(): string[] }) {}

  /** Every registered type, built-ins first. */
  names(): string[] {
    return this.registered.names();
  }

  /** Refuses a harness type no extension registered, naming the request field (absent is `oz`). */
  assertKnown(type: string | undefined, field: string): void {
    const names = this.names();
    if (type !== undefined && !names.includes(type)) {
      throw ApiError.invalid(field, `must be one of the following values: ${names.join(', ')}`);
    }
  }
}
