import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { outputEnded } from './output-grace';

describe('outputEnded', () => {
  it('still reads output that arrived while the event loop was blocked past the grace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ambient-grace-'));
    try {
      const written = join(dir, 'written');
      const child = spawn('sh', ['-c', `echo done; : > "${written}"`]);
      const chunks: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      const ended = once(child.stdout, 'end');
      await once(child, 'spawn');
      const waiting = outputEnded(ended, 5);
      // The loop is blocked (as by a busy moment of the service) until the output is in the pipe.
      const deadline = Date.now() + 20_000;
      while (!existsSync(written) && Date.now() < deadline);
      const graceOver = Date.now() + 20;
      while (Date.now() < graceOver);
      await waiting;
      expect(Buffer.concat(chunks).toString()).toBe('done\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('ends after the grace when the output never ends', async () => {
    const never = new Promise<void>(() => undefined);
    await expect(outputEnded(never, 5)).resolves.toBeUndefined();
  });
});
