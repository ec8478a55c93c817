import { createConnection, createServer, Server, Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { rm } from 'node:fs/promises';
import { listenOnSocketPath } from './fresh-paths';

/** Where the Ambient API appears inside a sandbox that has a bridge (loopback of its namespace). */
export const SANDBOX_API_PORT = 7171;
export const SANDBOX_API_HOST = '127.0.0.1';

/** The socket's name in the sandbox's private directory. */
export const API_SOCKET_NAME = 'api.sock';

/**
 * The way a sandbox reaches the Ambient API whatever its network policy: a Unix socket in the
 * sandbox's private directory, served by this process, each connection piped to the API (TLS when
 * it is https). Inside, a forwarder listens on 127.0.0.1:7171 of the sandbox's own network
 * namespace and connects to the socket, so commands use `$AMBIENT_API_URL` like any HTTP API.
 * The API checks the run-scoped key as always; nothing else of the host is reachable this way.
 */
export class ApiBridge {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private readonly path: string,
  ) {}

  static async listen(path: string, apiUrl: string): Promise<ApiBridge> {
    const target = new URL(apiUrl);
    const tls = target.protocol === 'https:';
    const port = Number(target.port) || (tls ? 443 : 80);
    const host = target.hostname.replace(/^\[|\]$/g, '');
    const server = createServer();
    // An accept that fails (EMFILE) is emitted here: the bridge goes on serving, as a live one
    // did before; without a listener it would end the whole process.
    server.on('error', () => undefined);
    const bridge = new ApiBridge(server, path);
    server.on('connection', (inside) => {
      const api = tls
        ? tlsConnect({ host, port, servername: host })
        : createConnection({ host, port });
      bridge.track(inside);
      bridge.track(api);
      inside.on('error', () => api.destroy());
      api.on('error', () => inside.destroy());
      inside.pipe(api).pipe(inside);
    });
    await listenOnSocketPath(server, path);
    return bridge;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.path, { force: true });
  }
}

/** The API base URL processes inside a bridged sandbox use (same path as the real one). */
export function bridgedApiUrl(apiUrl: string): string {
  return `http://${SANDBOX_API_HOST}:${SANDBOX_API_PORT}${new URL(apiUrl).pathname.replace(/\/+$/, '')}`;
}

/** A port as /proc/net/tcp writes it (upper-case hex, four digits). */
export function procNetPort(port: number): string {
  return port.toString(16).toUpperCase().padStart(4, '0');
}
