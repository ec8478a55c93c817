import { summarizeWorkers } from './worker-presence.service';

describe('summarizeWorkers', () => {
  it('groups connections by worker host, sorted, with the earliest connect and latest sign of life', () => {
    expect(
      summarizeWorkers([
        {
          worker_host: 'b',
          connected_at: '2026-01-01T10:00:00.000Z',
          last_seen_at: '2026-01-01T10:05:00.000Z',
        },
        {
          worker_host: 'a',
          connected_at: '2026-01-01T09:00:00.000Z',
          last_seen_at: '2026-01-01T09:30:00.000Z',
        },
        {
          worker_host: 'b',
          connected_at: '2026-01-01T08:00:00.000Z',
          last_seen_at: '2026-01-01T10:06:00.000Z',
        },
      ]),
    ).toEqual([
      {
        worker_host: 'a',
        connection_count: 1,
        connected_at: '2026-01-01T09:00:00.000Z',
        last_seen_at: '2026-01-01T09:30:00.000Z',
      },
      {
        worker_host: 'b',
        connection_count: 2,
        connected_at: '2026-01-01T08:00:00.000Z',
        last_seen_at: '2026-01-01T10:06:00.000Z',
      },
    ]);
  });

  it('is empty without connections', () => {
    expect(summarizeWorkers([])).toEqual([]);
  });
});
