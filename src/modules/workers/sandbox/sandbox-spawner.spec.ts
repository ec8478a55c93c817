import { PassThrough } from 'node:stream';
import type { SandboxExit, SandboxProcess } from './sandbox.types';
import { SandboxSpawner } from './sandbox-spawner';

/** A helper's event frame: length, op, id, fields. */
function frame(op: number, id: number, fields: Buffer = Buffer.alloc(0)): Buffer {
  const body = Buffer.concat([Buffer.from([op]), u32(id), fields]);
  return Buffer.concat([u32(body.length), body]);
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(value);
  return b;
}

function i32s(...values: number[]): Buffer {
  const b = Buffer.alloc(4 * values.length);
  values.forEach((value, i) => b.writeInt32LE(value, 4 * i));
  return b;
}

const READY = frame(6, 0);

/** A stand-in for the bwrap running the helper: what Ambient writes to it, what it sends back. */
function fakeHelper() {
  const stdin = new PassThrough();
  const written: Buffer[] = [];
  stdin.on('data', (chunk: Buffer) => written.push(chunk));
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let end!: (exit: SandboxExit) => void;
  const exited = new Promise<SandboxExit>((resolve) => (end = resolve));
  const kills: number[] = [];
  const helper: SandboxProcess = {
    stdin,
    stdout,
    stderr,
    exited,
    kill: () => {
      kills.push(Date.now());
      end({ code: null, signal: 'SIGKILL' });
    },
  };
  /** The ops of the frames Ambient wrote (requests), in order. */
  const ops = (): number[] => {
    const all = Buffer.concat(written);
    const found: number[] = [];
    for (let at = 0; at + 5 <= all.length; at += 4 + all.readUInt32LE(at)) found.push(all[at + 4]!);
    return found;
  };
  return { helper, stdout, stderr, kills, ops, end };
}

function collect(proc: SandboxProcess): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.stdout.on('end', () => resolve(out));
  });
}

describe('SandboxSpawner', () => {
  it("starts a command once its helper is ready and passes on the command's output and exit", async () => {
    const fake = fakeHelper();
    fake.stdout.write(READY);
    const spawner = await SandboxSpawner.start(fake.helper, 5_000);
    expect(spawner).toBeInstanceOf(SandboxSpawner);
    const proc = (spawner as SandboxSpawner).spawn('/bin/sh', ['-c', 'echo hi'], {
      env: { PATH: '/usr/bin' },
    });
    const output = collect(proc);
    expect(fake.ops()).toEqual([1]);
    fake.stdout.write(
      Buffer.concat([
        frame(1, 1, i32s(3)),
        frame(3, 1, Buffer.concat([Buffer.from([1]), Buffer.from('hi\n')])),
        frame(4, 1, Buffer.from([1])),
        frame(4, 1, Buffer.from([2])),
        frame(5, 1, i32s(0, 0)),
      ]),
    );
    expect(await output).toBe('hi\n');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
    // A kill goes to the helper, by the command's id: its pid is the sandbox's.
    proc.kill();
    expect(fake.ops()).toEqual([1, 6]);
  });

  it('ends a helper that sends a frame larger than any event of its, and the commands it had', async () => {
    const fake = fakeHelper();
    fake.stdout.write(READY);
    const spawner = (await SandboxSpawner.start(fake.helper, 5_000)) as SandboxSpawner;
    const proc = spawner.spawn('/bin/true', [], { env: {} });
    fake.stdout.write(Buffer.concat([frame(1, 1, i32s(3)), u32(64 << 20)]));
    const exit = await proc.exited;
    expect(exit.startError?.message).toMatch(/process spawner stopped/);
    expect(fake.kills).toHaveLength(1);
    // Nothing starts any more, and nothing is asked of the helper.
    const later = spawner.spawn('/bin/true', [], { env: {} });
    expect((await later.exited).startError?.code).toBe('ESRCH');
    expect(fake.ops()).toEqual([1]);
  });

  it('ends a helper that sends a frame too short for its kind', async () => {
    const fake = fakeHelper();
    fake.stdout.write(READY);
    const spawner = (await SandboxSpawner.start(fake.helper, 5_000)) as SandboxSpawner;
    const proc = spawner.spawn('/bin/true', [], { env: {} });
    // An exit event without its code and signal.
    fake.stdout.write(frame(5, 1));
    expect((await proc.exited).startError?.message).toMatch(/process spawner stopped/);
    expect(fake.kills).toHaveLength(1);
  });

  it('gives up on a helper that does not say it is ready, with what it said', async () => {
    const fake = fakeHelper();
    fake.stderr.write('bwrap: cannot mount\n');
    const started = await SandboxSpawner.start(fake.helper, 50);
    expect(started).toEqual({ said: 'bwrap: cannot mount', code: null });
    expect(fake.kills).toHaveLength(1);
  });

  it('says how a helper that exited before it was ready ended (the spawner refusing the host: 78)', async () => {
    const fake = fakeHelper();
    fake.stderr.write(
      'ambient-spawner --confine: mount_setattr /newroot/usr: Function not implemented\n',
    );
    fake.stderr.end();
    fake.stdout.end();
    fake.end({ code: 78, signal: null });
    const started = await SandboxSpawner.start(fake.helper, 5_000);
    expect(started).toEqual({
      said: 'ambient-spawner --confine: mount_setattr /newroot/usr: Function not implemented',
      code: 78,
    });
  });
});
