import { createServer, Server, Socket } from 'node:net';

/**
 * A TCP forwarder that a test can cut, to make a real server (MySQL, Redis) unreachable for the
 * process under test and bring it back on the same port — or pause, to make it stall (bytes are
 * held, connections stay open) and resume.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private paused = false;
  /** Local ports of the upstream connections (MySQL's PROCESSLIST shows them as the client's). */
  private readonly upstreams = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<void> {
    this.server = createServer((client) => {
      const upstream = new Socket();
      upstream.connect(this.targetPort, this.targetHost);
      this.upstreams.add(upstream);
      upstream.on('close', () => this.upstreams.delete(upstream));
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      if (this.paused) {
        client.pause();
        upstream.pause();
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  /** Refuses new connections and breaks the open ones. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Holds every byte in both directions (a stalled server or network); connections stay open. */
  pause(): void {
    this.paused = true;
    for (const s of this.sockets) s.pause();
  }

  resume(): void {
    this.paused = false;
    for (const s of this.sockets) s.resume();
  }

  /** `host:port` of each open upstream connection, as the target server sees its client. */
  upstreamClients(): string[] {
    return [...this.upstreams]
      .filter((s) => s.localPort !== undefined)
      .map((s) => `${s.localAddress}:${s.localPort}`);
  }
}
