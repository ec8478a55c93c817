import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RunApiClient, RunApiError } from './run-api-client';

/**
 * A self-hosted worker sends a command's timeline events in one call, dated by how long ago they
 * happened; a server that predates the batch endpoint gets them one by one.
 */
describe('RunApiClient.appendEvents', () => {
  let server: Server;
  let received: { path: string; body: Record<string, unknown> }[];
  let batchStatus: number;

  beforeEach(async () => {
    received = [];
    batchStatus = 204;
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString()));
      req.on('end', () => {
        const path = req.url!.replace(/^\/api\/harness-support\//, '');
        received.push({ path, body: JSON.parse(text) as Record<string, unknown> });
        res.statusCode = path === 'events/batch' ? batchStatus : 204;
        if (res.statusCode >= 400) {
          res.setHeader('Content-Type', 'application/problem+json');
          res.end(JSON.stringify({ detail: `answered ${res.statusCode}` }));
        } else {
          res.end();
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  afterEach(() => new Promise((resolve) => server.close(resolve)));

  const client = () =>
    new RunApiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, 'amb_key');
  const events = (now: number) => [
    { eventType: 'command_started', payload: { command_id: 'c' }, occurredAt: new Date(now - 200) },
    { eventType: 'command_finished', occurredAt: new Date(now) },
  ];

  it('sends the events in one call, in order, each with its age', async () => {
    await client().appendEvents(events(Date.now()));
    expect(received).toHaveLength(1);
    const [{ path, body }] = received;
    expect(path).toBe('events/batch');
    const sent = body.events as { event_type: string; payload?: object; age_ms: number }[];
    expect(sent.map((e) => [e.event_type, e.payload])).toEqual([
      ['command_started', { command_id: 'c' }],
      ['command_finished', undefined],
    ]);
    expect(sent[0].age_ms).toBeGreaterThanOrEqual(200);
    expect(sent[0].age_ms - sent[1].age_ms).toBe(200);
  });

  it('sends them one by one to a server without the batch endpoint, and stops asking it', async () => {
    batchStatus = 404;
    const api = client();
    await api.appendEvents(events(Date.now()));
    await api.appendEvents(events(Date.now()));
    expect(received.map((r) => [r.path, r.body.event_type])).toEqual([
      ['events/batch', undefined],
      ['events', 'command_started'],
      ['events', 'command_finished'],
      ['events', 'command_started'],
      ['events', 'command_finished'],
    ]);
  });

  it('passes any other refusal on, and keeps batching', async () => {
    batchStatus = 403;
    const api = client();
    await expect(api.appendEvents(events(Date.now()))).rejects.toBeInstanceOf(RunApiError);
    batchStatus = 204;
    await api.appendEvents(events(Date.now()));
    expect(received.map((r) => r.path)).toEqual(['events/batch', 'events/batch']);
  });
});
