import { Inject, Injectable } from '@nestjs/common';
import { Harness, HARNESSES } from './harness.types';

/** Finds the harness a run asked for by `config.harness.type` (absent means the built-in `oz`). */
@Injectable()
export class HarnessRegistry {
  private readonly byType: Map<string, Harness>;

  constructor(@Inject(HARNESSES) harnesses: Harness[]) {
    this.byType = new Map(harnesses.map((h) => [h.type, h]));
  }

  find(type: string | undefined): Harness | undefined {
    return this.byType.get(type ?? 'oz');
  }

  get types(): string[] {
    return [...this.byType.keys()];
  }
}
