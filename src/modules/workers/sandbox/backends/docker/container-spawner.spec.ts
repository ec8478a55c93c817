import { execFile } from 'node:child_process';
import { constants, openSync, closeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  containerSpawner,
  forgetContainerSpawner,
  forgetContainerSpawners,
  spawnerEventsFifo,
} from './container-spawner';

const FIFO = 'launch-0123abcd';

/** Whether a writer of the events FIFO finds a reader (the launcher's open would go ahead). */
function eventsHaveReader(dir: string): boolean {
  try {
    closeSync(
      openSync(join(dir, spawnerEventsFifo(FIFO)), constants.O_WRONLY | constants.O_NONBLOCK),
    );
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENXIO') return false;
    throw error;
  }
}

describe('a container spawner channel', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ambient-spawner-channel-'));
    await promisify(execFile)('mkfifo', [
      '-m',
      '600',
      join(dir, FIFO),
      join(dir, spawnerEventsFifo(FIFO)),
    ]);
  });

  afterEach(async () => {
    await forgetContainerSpawners(dir);
    await rm(dir, { recursive: true, force: true });
  });

  it('is null for a container without the events FIFO (a shell launcher)', async () => {
    expect(await containerSpawner(dir, 'launch-ffff0000', 50)).toBeNull();
  });

  it('is null when the spawner does not say it is ready in time, and shared until forgotten', async () => {
    const first = containerSpawner(dir, FIFO, 50);
    expect(containerSpawner(dir, FIFO, 50)).toBe(first);
    expect(await first).toBeNull();
    await forgetContainerSpawner(dir, FIFO);
    expect(containerSpawner(dir, FIFO, 50)).not.toBe(first);
  });

  it('lets go of the events FIFO at once when forgotten while it waits for the word', async () => {
    const waiting = containerSpawner(dir, FIFO, 60_000);
    expect(eventsHaveReader(dir)).toBe(true);
    // Well within the test's time, not after the minute's wait.
    await forgetContainerSpawner(dir, FIFO);
    expect(await waiting).toBeNull();
    // A launcher started anew on the same FIFOs finds no reader of the old one.
    expect(eventsHaveReader(dir)).toBe(false);
  });
});
