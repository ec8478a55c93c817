import { LiveHub, type HubClient } from './live-hub';
import type { ToHub } from './protocol';

/** The SharedWorker that holds the browser's live connections for every console tab. */
interface ConnectEvent {
  ports: readonly MessagePort[];
}
const scope = self as unknown as { onconnect: ((event: ConnectEvent) => void) | null };
const hub = new LiveHub();

scope.onconnect = (event) => {
  const port = event.ports[0];
  const client: HubClient = { post: (message) => port.postMessage(message) };
  const receive = hub.attach(client);
  port.onmessage = (message: MessageEvent<ToHub>) => receive(message.data);
  // Where the browser reports it, a page that went away without its goodbye closes its port.
  port.addEventListener('close', () => hub.detach(client));
};
