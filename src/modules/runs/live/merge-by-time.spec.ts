import type { RunEvent } from '../entities/run-event.entity';
import type { RunMessage } from '../entities/run-message.entity';
import { mergeByTime } from './run-feed';

const event = (id: string, ms: number) => ({ id, occurredAt: new Date(ms) }) as RunEvent;
const message = (id: string, ms: number) => ({ id, createdAt: new Date(ms) }) as RunMessage;
const order = (items: ReturnType<typeof mergeByTime>) =>
  items.map((i) => `${i.kind[0]}${i.row.id}`).join(' ');

describe('mergeByTime (timeline events and messages of one catch-up)', () => {
  it('interleaves by time, timeline first on a tie', () => {
    const items = mergeByTime(
      [event('1', 10), event('2', 30)],
      [message('5', 10), message('6', 20), message('7', 40)],
      false,
      false,
    );
    expect(order(items)).toBe('t1 m5 m6 t2 m7');
  });

  it("keeps each table's id order even when its clocks disagree", () => {
    const items = mergeByTime([event('1', 50), event('2', 10)], [message('5', 20)], false, false);
    expect(order(items)).toBe('m5 t1 t2');
  });

  it('stops where a full batch ends, since its next rows are not read yet', () => {
    const events = [event('1', 10), event('2', 20)];
    const messages = [message('5', 15), message('6', 30)];
    expect(order(mergeByTime(events, messages, true, false))).toBe('t1 m5 t2');
    expect(order(mergeByTime(events, messages, false, true))).toBe('t1 m5 t2 m6');
    expect(order(mergeByTime(events, [], true, false))).toBe('t1 t2');
  });
});
