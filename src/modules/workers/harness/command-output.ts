import { StringDecoder } from 'node:string_decoder';
import { newUid } from '../../../common/ids';
import { COMMAND_OUTPUT_EVENT } from '../../runs';

/** A timeline event's emitter (`HarnessContext.emitEvent`, a setup's `emit`). */
export type EmitEvent = (eventType: string, payload?: Record<string, unknown>) => Promise<void>;

export interface CommandOutputLimits {
  /** Characters of one `command_output` event at most. */
  chunkChars: number;
  /** Output waits at most this long before it is sent (fewer, larger events). */
  flushMs: number;
  /** Characters of one command's output sent live at most; the rest is not streamed. */
  maxChars: number;
}

/**
 * A few events a second of a few KB each: enough to watch a build, bounded per command so a
 * chatty command cannot fill the timeline (its whole output's head and tail are in its result).
 */
export const COMMAND_OUTPUT_LIMITS: CommandOutputLimits = {
  chunkChars: 4096,
  flushMs: 500,
  maxChars: 32 * 1024,
};

/** The id that ties a command's start, output and end events together. */
export function newCommandId(): string {
  return newUid(12);
}

/**
 * A running command's output as `command_output` timeline events (`{command_id, seq, text}`, the
 * last one sent with `truncated: true` when the command said more than `maxChars`). Events go
 * out one after another, in order; one that cannot be recorded (the execution lost its run) ends
 * the stream quietly: the live view is a convenience, the command's result keeps its output.
 */
export class CommandOutputStream {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private sentChars = 0;
  private seq = 0;
  private ended = false;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(
    private readonly commandId: string,
    private readonly emit: EmitEvent,
    private readonly limits: CommandOutputLimits = COMMAND_OUTPUT_LIMITS,
  ) {}

  write(chunk: Buffer): void {
    if (this.ended) return;
    this.pending += this.decoder.write(chunk);
    if (this.pending.length >= this.limits.chunkChars) this.flush(false);
    if (this.pending && !this.timer) {
      this.timer = setTimeout(() => this.flush(true), this.limits.flushMs);
      this.timer.unref();
    }
  }

  /** Sends what is left and waits until every event is recorded (or given up). */
  async close(): Promise<void> {
    this.pending += this.decoder.end();
    this.flush(true);
    this.ended = true;
    await this.sending;
  }

  /** Sends the pending output in chunks: all of it, or (`all` false) only whole chunks. */
  private flush(all: boolean): void {
    if (all) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const minimum = all ? 1 : this.limits.chunkChars;
    while (this.pending.length >= minimum && !this.ended) {
      const size = Math.min(this.limits.chunkChars, this.limits.maxChars - this.sentChars);
      const text = this.pending.slice(0, size);
      this.pending = this.pending.slice(size);
      this.sentChars += text.length;
      // More to say than may be sent: this is the last event (possibly empty, just the mark).
      const truncated = this.sentChars >= this.limits.maxChars && this.pending.length > 0;
      if (truncated) {
        this.ended = true;
        this.pending = '';
      }
      this.send({ text, ...(truncated ? { truncated: true } : {}) });
    }
  }

  private send(fields: { text: string; truncated?: boolean }): void {
    const payload = { command_id: this.commandId, seq: this.seq++, ...fields };
    this.sending = this.sending.then(() =>
      this.emit(COMMAND_OUTPUT_EVENT, payload).catch(() => {
        this.ended = true;
        this.pending = '';
      }),
    );
  }
}

/**
 * Runs `command` (given the output callback to pass to `runCommand`) with its output streamed as
 * `command_output` events of `commandId`; all of them are recorded when it returns.
 */
export async function withStreamedOutput<T>(
  emit: EmitEvent | undefined,
  commandId: string,
  command: (onOutput?: (chunk: Buffer) => void) => Promise<T>,
): Promise<T> {
  if (!emit) return command();
  const stream = new CommandOutputStream(commandId, emit);
  try {
    return await command((chunk) => stream.write(chunk));
  } finally {
    await stream.close();
  }
}
