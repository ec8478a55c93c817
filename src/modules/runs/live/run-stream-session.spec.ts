import { EventEmitter } from 'node:events';
import type { Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { RunEvent } from '../entities/run-event.entity';
import type { RunStreamReader } from './run-stream-reader.service';
import { RunStreamSession } from './run-stream-session';

/** An Express response that accepts writes while `accepting`, and drains when told. */
class FakeResponse extends EventEmitter {
  chunks: string[] = [];
  accepting = true;
  writableLength = 0;
  writableEnded = false;
  destroyed = false;
  status = () => this;
  setHeader = () => this;
  flushHeaders = () => undefined;
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    if (!this.accepting) this.writableLength += chunk.length;
    return this.accepting;
  }
  end(chunk?: string): void {
    if (chunk) this.chunks.push(chunk);
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
  drain(): void {
    this.accepting = true;
    this.writableLength = 0;
    this.emit('drain');
  }
}

const event = (id: number): RunEvent =>
  ({
    id: String(id),
    eventUuid: `uuid-${id}`,
    runId: 'run-1',
    executionId: 1,
    eventType: 'agent_started',
    occurredAt: new Date(1_700_000_000_000 + id),
    payload: null,
  }) as RunEvent;

function setup(events: RunEvent[], drainTimeoutMs = 60_000) {
  const res = new FakeResponse();
  const calls = { timelineAfter: 0 };
  const reader = {
    item: async () => ({ run_id: 'run-1', state: 'INPROGRESS' }),
    latest: async () => ({ timeline: 0n, message: 0n }),
    timelineAfter: async (_runId: string, after: bigint, limit: number) => {
      calls.timelineAfter++;
      return events.filter((e) => BigInt(e.id) > after).slice(0, limit);
    },
    messagesAfter: async () => [],
    callsBefore: async () => new Map(),
  } as unknown as RunStreamReader;
  const session = new RunStreamSession(
    { socket: { setNoDelay: () => undefined, setTimeout: () => undefined } } as unknown as Request,
    res as unknown as Response,
    { id: 'run-1', teamId: 'team-1', config: {} },
    reader,
    { heartbeatMs: 60_000, batchSize: 2, drainTimeoutMs },
    { warn: () => undefined } as unknown as Logger,
  );
  const closed = new Promise<void>((resolve) => session.onClose(resolve));
  /** Resolves once the session has written `count` chunks. */
  const written = (count: number) =>
    new Promise<void>((resolve) => {
      const check = () => (res.chunks.length >= count ? resolve() : setImmediate(check));
      check();
    });
  return { res, session, calls, closed, written };
}

const frames = (res: FakeResponse) =>
  res.chunks.map((c) => c.split('\n').slice(0, 2).join(' ').trim());

describe('RunStreamSession', () => {
  it('resumes after a cursor: the snapshot, the missed rows in batches, the snapshot again', async () => {
    const { res, session } = setup([event(3), event(5), event(8)]);
    await session.start({ timeline: 3n, message: 0n });
    expect(frames(res)).toEqual([
      'id: 3-0 event: run',
      'id: 5-0 event: timeline',
      'id: 8-0 event: timeline',
      'id: 8-0 event: run',
    ]);
    session.close();
  });

  it('coalesces hints while the client is slow, and reads once more when it drains', async () => {
    const events = [event(1)];
    const { res, session, calls, written } = setup(events);
    await session.start(null);
    res.accepting = false;
    session.poke(['timeline']);
    await written(2); // the event is written; the pump now waits for the drain
    events.push(event(2), event(3));
    for (let i = 0; i < 1000; i++) session.poke(['timeline']);
    const before = calls.timelineAfter;
    res.drain();
    await written(4);
    expect(calls.timelineAfter - before).toBeLessThanOrEqual(2);
    expect(frames(res).slice(1)).toEqual([
      'id: 1-0 event: timeline',
      'id: 2-0 event: timeline',
      'id: 3-0 event: timeline',
    ]);
    session.close();
  });

  it('drops a client that reads nothing for the drain timeout, saying why', async () => {
    const { res, session, closed } = setup([event(1)], 20);
    await session.start(null);
    res.accepting = false;
    session.poke(['timeline']);
    await closed;
    expect(res.chunks.at(-1)).toMatch(/^: dropped: the client did not read for 20 ms; reconnect/);
    expect(res.destroyed).toBe(true);
  });
});
