// TEMPORARY pass-through (tunnels only) until the egress-proxy branch lands; never committed.
import { createConnection, createServer, Server, Socket } from 'node:net';
import { rm } from 'node:fs/promises';
import type { EgressGuard } from '../../../../common/egress/egress-guard';
import type { EgressDecision, EgressPolicy } from '../../../../common/egress/egress-policy';
import { matchEgressRule } from '../../../../common/egress/egress-rules';

export class EgressProxy {
  readonly caCertPem = '';
  private servers: Server[] = [];
  private sockets = new Set<Socket>();
  private constructor(
    private readonly options: {
      policy: EgressPolicy;
      guard: EgressGuard;
      onDecision?: (d: EgressDecision) => void;
    },
  ) {}
  static async start(options: {
    policy: EgressPolicy;
    guard: EgressGuard;
    onDecision?: (d: EgressDecision) => void;
    upstreamCa?: string[];
  }): Promise<EgressProxy> {
    return new EgressProxy(options);
  }
  async listen(socketPath: string): Promise<void> {
    await rm(socketPath, { force: true });
    const server = createServer((s) => this.handle(s));
    this.servers.push(server);
    await new Promise<void>((r) => server.listen(socketPath, r));
  }
  handle(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('data', (chunk) => {
      const line = chunk.toString('latin1').split('\r\n')[0]!;
      const m = /^CONNECT ([^:]+):(\d+) /.exec(line);
      if (!m) return void socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      const host = m[1]!;
      const port = Number(m[2]);
      const decide = (allowed: boolean, reason: string) =>
        this.options.onDecision?.({ host, port, method: null, allowed, reason });
      const { policy } = this.options;
      const rule =
        policy.mode === 'egress'
          ? { rule: { source: '*' } }
          : matchEgressRule(policy.rules, host, port, null);
      if (!rule) {
        decide(false, `no rule allows ${host}:${port}`);
        return void socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n`);
      }
      this.options.guard.check(host, port).then(
        (t) => {
          decide(true, rule.rule.source);
          const up = createConnection({ host: t.address, port });
          this.sockets.add(up);
          up.on('error', () => socket.destroy());
          socket.on('error', () => up.destroy());
          up.on('connect', () => {
            socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
            socket.pipe(up).pipe(socket);
          });
        },
        (e: Error) => {
          decide(false, e.message);
          socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n`);
        },
      );
    });
  }
  stats() {
    return { allowed: [], denied: [] };
  }
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await Promise.all(this.servers.map((s) => new Promise((r) => s.close(r))));
  }
}
