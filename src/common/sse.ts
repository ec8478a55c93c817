/**
 * Server-Sent Events framing (https://html.spec.whatwg.org/multipage/server-sent-events.html):
 * what the live stream writes and what the CLI reads back.
 */

export interface SseEvent {
  id?: string;
  event: string;
  data: string;
}

/**
 * One event as written on the wire. `data` is JSON (no raw newlines), so it is always one `data:`
 * line; ids and names must not contain line breaks, which would end the field early.
 */
export function formatSseEvent(event: string, data: unknown, id?: string): string {
  for (const [name, value] of [
    ['event', event],
    ['id', id ?? ''],
  ]) {
    if (/[\r\n]/.test(value)) throw new Error(`SSE ${name} must be one line`);
  }
  const idLine = id === undefined ? '' : `id: ${id}\n`;
  return `${idLine}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A comment line (ignored by clients): keep-alives and the reason a stream ends. */
export function formatSseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/**
 * Incremental parser: feed it chunks as they arrive, it calls `onEvent` per complete event and
 * `onComment` per comment line. Follows the spec's field rules (one optional space after the
 * colon, `data` lines joined with \n, CRLF/CR/LF line ends, unknown fields ignored), except that
 * an event with no `event:` field is named `message` and the last id is reported per event.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | undefined;
  private sawField = false;

  constructor(
    private readonly onEvent: (event: SseEvent) => void,
    private readonly onComment: (text: string) => void = () => undefined,
  ) {}

  push(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      // A lone CR at the end may be the first half of a CRLF still in flight.
      if (!match || (match[0] === '\r' && match.index === this.buffer.length - 1)) return;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return this.onComment(line.slice(1).replace(/^ /, ''));
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    this.sawField = true;
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }

  private dispatch(): void {
    const complete = this.sawField && this.data.length > 0;
    const event = { event: this.event || 'message', data: this.data.join('\n'), id: this.id };
    this.data = [];
    this.event = '';
    this.sawField = false;
    if (complete) this.onEvent(event);
  }
}
