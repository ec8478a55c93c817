import { WebSocket } from 'ws';
import type { apiClient } from './api-client';

export interface Envelope {
  type: string;
  data: Record<string, unknown>;
}

/** The worker websocket URL of an API base URL (`http://host:port/api/v1`). */
export function workerSocketUrl(apiBaseUrl: string, workerId: string): string {
  const url = new URL(`${apiBaseUrl.replace(/^http/, 'ws')}/selfhosted/worker/ws`);
  url.searchParams.set('worker_id', workerId);
  return url.toString();
}

/** A worker credential made by an admin's client for `workerId` (an id, or `<prefix>*`). */
export async function createWorkerCredential(
  admin: ReturnType<typeof apiClient>,
  workerId: string,
): Promise<{ id: string; credential: string; prefix: string }> {
  const created = await admin.post('/worker-credentials', {
    name: `worker ${workerId}`,
    worker_id: workerId,
  });
  if (created.status !== 201) {
    throw new Error(
      `worker credential for ${workerId}: HTTP ${created.status} ${JSON.stringify(created.body)}`,
    );
  }
  return created.body as { id: string; credential: string; prefix: string };
}

/** A handshake the server is expected to refuse: its HTTP status and Error model body. */
export function refusedHandshake(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.terminate();
      reject(new Error('the handshake was accepted'));
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () => {
        ws.terminate();
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    ws.on('error', () => undefined);
  });
}

/**
 * A hand-driven worker connection for protocol tests: it records every frame and answers only
 * what the test sends (the real worker program is tested in self-hosted-workers.e2e-spec.ts).
 */
export class RawWorkerClient {
  readonly received: Envelope[] = [];
  private readonly waiters = new Set<() => void>();
  private consumed = 0;
  closed = false;
  /** The close code the server sent (1008: its key was revoked). */
  closeCode: number | undefined;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.received.push(JSON.parse(data.toString()) as Envelope);
      for (const waiter of this.waiters) waiter();
    });
    ws.on('close', (code) => {
      this.closed = true;
      this.closeCode = code;
      for (const waiter of this.waiters) waiter();
    });
  }

  /** Connects as `workerId`, registering with a worker credential. */
  static connect(
    apiBaseUrl: string,
    credential: string,
    workerId: string,
  ): Promise<RawWorkerClient> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(workerSocketUrl(apiBaseUrl, workerId), {
        headers: { Authorization: `Bearer ${credential}` },
      });
      ws.once('open', () => resolve(new RawWorkerClient(ws)));
      ws.once('error', reject);
    });
  }

  /** The next frame not returned before (of `type`, when given). */
  next(type?: string, timeoutMs = 10_000): Promise<Envelope> {
    return new Promise((resolve, reject) => {
      const check = () => {
        for (let i = this.consumed; i < this.received.length; i++) {
          if (type && this.received[i].type !== type) continue;
          this.consumed = i + 1;
          done();
          return resolve(this.received[i]);
        }
        if (this.closed) {
          done();
          reject(new Error(`connection closed while waiting for ${type ?? 'a frame'}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${type ?? 'frame'} within ${timeoutMs} ms`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
      };
      this.waiters.add(check);
      check();
    });
  }

  send(type: string, data: Record<string, unknown>): void {
    this.ws.send(JSON.stringify({ type, data }));
  }

  /** Resolves when the server closes the connection. */
  whenClosed(timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closed) return resolve();
      const timer = setTimeout(() => reject(new Error('still open')), timeoutMs);
      this.ws.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  close(): void {
    this.ws.terminate();
  }
}
