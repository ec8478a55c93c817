import { WebSocket } from 'ws';
import { Backoff } from './backoff';

/** The public worker's keepalive: a ping every 30 s, and a connection silent for 60 s is dead. */
const PING_INTERVAL_MS = 30_000;
const READ_DEADLINE_MS = 60_000;
const HANDSHAKE_TIMEOUT_MS = 15_000;

export interface SocketHandlers {
  onOpen(): void;
  onMessage(text: string): void;
  onClose(): void;
}

/**
 * The worker's side of the websocket: dials with its worker credential (or API key), pings every 30 s, drops a
 * connection that stays silent for 60 s, and redials with exponential backoff (1 s doubling to
 * 60 s, reset after a successful dial) until stopped.
 */
export class WorkerSocket {
  private ws: WebSocket | null = null;
  private readonly backoff = new Backoff();
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly credential: string,
    private readonly handlers: SocketHandlers,
    private readonly log: (line: string) => void,
  ) {}

  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  start(): void {
    this.dial();
  }

  /** Sends a JSON text frame; false when not connected (the message is dropped). */
  send(text: string): boolean {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(text);
    return true;
  }

  /** Closes with 1000 (normal closure) and stops redialling. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    const ws = this.ws;
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(1000, 'worker shutting down');
      setTimeout(() => {
        ws.terminate();
        resolve();
      }, 3000).unref();
    });
  }

  private dial(): void {
    const ws = new WebSocket(this.url, {
      headers: { Authorization: `Bearer ${this.credential}` },
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
    });
    this.ws = ws;
    ws.on('open', () => {
      this.backoff.reset();
      this.extendDeadline(ws);
      this.pingTimer = setInterval(() => ws.ping(), PING_INTERVAL_MS);
      this.handlers.onOpen();
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString().slice(0, 2000)));
      res.on('end', () => {
        this.log(`connection refused: HTTP ${res.statusCode} ${problemDetail(body)}`);
        ws.terminate();
      });
    });
    ws.on('message', (data, isBinary) => {
      this.extendDeadline(ws);
      if (!isBinary) this.handlers.onMessage(data.toString());
    });
    ws.on('ping', () => this.extendDeadline(ws));
    ws.on('pong', () => this.extendDeadline(ws));
    ws.on('error', (err) => this.log(`connection error: ${err.message}`));
    ws.on('close', (code) => {
      const wasOpen = this.pingTimer !== undefined;
      clearInterval(this.pingTimer);
      clearTimeout(this.deadlineTimer);
      this.pingTimer = undefined;
      if (this.ws === ws) this.ws = null;
      if (wasOpen) {
        this.log(`disconnected (code ${code})`);
        this.handlers.onClose();
      }
      if (!this.stopped) this.redial();
    });
  }

  private redial(): void {
    const delay = this.backoff.next();
    this.log(`reconnecting in ${delay / 1000} s`);
    this.reconnectTimer = setTimeout(() => this.dial(), delay);
  }

  private extendDeadline(ws: WebSocket): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => {
      this.log(`no frame from the server for ${READ_DEADLINE_MS / 1000} s; reconnecting`);
      ws.terminate();
    }, READ_DEADLINE_MS);
  }
}

function problemDetail(body: string): string {
  try {
    const problem = JSON.parse(body) as { detail?: string; title?: string };
    return problem.detail ?? problem.title ?? body;
  } catch {
    return body;
  }
}
