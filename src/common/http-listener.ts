import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The `http://host:port` clients on this machine use for a server bound to `host`. */
export function localBaseUrl(host: string, port: number): string {
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
}

export interface Listener {
  /** `http://host:port` it answers on (the bound port when `port` was 0). */
  url: string;
  /** Stops listening and drops kept-alive connections, so shutdown never waits on a scraper. */
  close(): Promise<void>;
}

/** Starts a small side listener (metrics, health probes) and says where it answers. */
export async function listen(server: Server, host: string, port: number): Promise<Listener> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: localBaseUrl(host, bound),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
