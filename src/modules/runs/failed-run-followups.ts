import { Injectable } from '@nestjs/common';

/** Takes a follow-up sent to a FAILED run instead of continuing the run; true when it did. */
export type FailedRunFollowupHandler = (runId: string) => Promise<boolean>;

/**
 * A follow-up to a FAILED run is normally its continuation. The workers module may take it
 * first: inside the debug window of a failed environment setup a debug agent answers and the
 * run stays FAILED. The handler is registered from there, so runs never imports execution.
 */
@Injectable()
export class FailedRunFollowups {
  private handler: FailedRunFollowupHandler | null = null;

  register(handler: FailedRunFollowupHandler): void {
    if (this.handler) throw new Error('a handler of follow-ups to failed runs is registered twice');
    this.handler = handler;
  }

  /** True when the registered handler took the follow-up. */
  async take(runId: string): Promise<boolean> {
    return this.handler ? this.handler(runId) : false;
  }
}
