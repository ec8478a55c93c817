import { ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findSandboxForwarder, SandboxForwarder } from './sandbox-forwarder';

/** The compiled forwarder (native/forwarder.c), run on this host's loopback with `-p` (port 0). */
describe('the compiled sandbox forwarder', () => {
  let dir: string;
  let forwarder: SandboxForwarder;
  const started: ChildProcess[] = [];
  const servers: Server[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'ambient-forwarder-'));
    // npm ci builds it wherever a C compiler is (CI installs one).
    forwarder = findSandboxForwarder()!;
    expect(forwarder.kind).toBe('native');
  });

  afterEach(async () => {
    for (const child of started.splice(0)) child.kill('SIGKILL');
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Starts the forwarder for `sockets` (each on a free port); resolves with those ports. */
  async function forward(...sockets: string[]): Promise<number[]> {
    const command = forwarder.command(
      sockets.map((socketPath) => ({ port: 0, socketPath })),
      forwarder.hostPath,
    );
    const child = spawn(command[0]!, ['-p', ...command.slice(1)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    started.push(child);
    let out = '';
    for await (const chunk of child.stdout!) {
      out += String(chunk);
      const lines = out.split('\n');
      if (lines.length > sockets.length) return lines.slice(0, sockets.length).map(Number);
    }
    throw new Error(`the forwarder ended before listening: ${out}`);
  }

  /** A Unix socket server at `name` in the test's directory. */
  async function unixServer(name: string, onConnection: (s: Socket) => void): Promise<string> {
    const path = join(dir, name);
    // Half-open: a server answers after its client ended its side (as HTTP peers may).
    const server = createServer({ allowHalfOpen: true }, onConnection);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    return path;
  }

  /** Connects to `port`, sends `body` and ends; resolves with all it read before the end. */
  function exchange(port: number, body: Buffer | string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('end', () => resolve(Buffer.concat(chunks)));
      socket.on('error', reject);
      socket.end(body);
    });
  }

  it('forwards each port to its own socket, from one process', async () => {
    const answer = (name: string) => (s: Socket) => {
      const chunks: Buffer[] = [];
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('end', () => s.end(`${name} got ${Buffer.concat(chunks).toString()}`));
    };
    const api = await unixServer('api.sock', answer('api'));
    const proxy = await unixServer('proxy.sock', answer('proxy'));
    // One forwarder process for both (forward starts one); test/sandbox-bubblewrap counts a
    // holder's processes.
    const [apiPort, proxyPort] = await forward(api, proxy);
    expect((await exchange(apiPort!, 'one')).toString()).toBe('api got one');
    expect((await exchange(proxyPort!, 'two')).toString()).toBe('proxy got two');
  });

  it('carries megabytes both ways at once, and passes an end of stream on as a half-close', async () => {
    // The server echoes as it reads: neither side reads only after it has written everything,
    // so a forwarder that blocks one way while the other fills up would never finish.
    const echo = await unixServer('echo.sock', (s) => s.pipe(s));
    const [port] = await forward(echo);
    const body = randomBytes(8 * 1024 * 1024);
    const back = await exchange(port!, body);
    expect(back.length).toBe(body.length);
    expect(createHash('sha256').update(back).digest('hex')).toBe(
      createHash('sha256').update(body).digest('hex'),
    );
  });

  it('serves many connections at once, each to its own end', async () => {
    const path = await unixServer('many.sock', (s) => {
      s.once('data', (c: Buffer) => setTimeout(() => s.end(`re:${c.toString()}`), 20));
    });
    const [port] = await forward(path);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => exchange(port!, `n${i}`).then(String)),
    );
    expect(answers).toEqual(Array.from({ length: 50 }, (_, i) => `re:n${i}`));
  });

  it('closes a connection whose socket is not there, and forwards again once it is', async () => {
    const path = join(dir, 'later.sock');
    const [port] = await forward(path);
    // Closed unanswered: an end of stream, or a reset when the request was still unread.
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(port!, '127.0.0.1');
      let received = '';
      socket.on('data', (c: Buffer) => (received += c.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(received));
      socket.end('anyone?');
    });
    expect(answer).toBe('');
    await unixServer('later.sock', (s) => s.end('here now'));
    expect((await exchange(port!, '')).toString()).toBe('here now');
  });

  /** Runs `command` (the forwarder, or what runs it) to its end: its exit code and stderr. */
  async function exitOf(command: string[]): Promise<{ code: number | null; err: string }> {
    const child = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
    started.push(child);
    let err = '';
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    // 'close', not 'exit': the exit can come before what it wrote to stderr was read.
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, err };
  }

  it('says 78 when the host refuses it the namespaces, 71 for any other failure to make them', async () => {
    // The kernel refuses a new user namespace to a process in a chroot (EPERM), as a host's
    // policy may (Ubuntu's AppArmor restriction): the forwarder run from a chroot of its own.
    // chroot needs root, which CI's run has.
    expect(process.getuid!()).toBe(0);
    const jail = join(dir, 'jail');
    mkdirSync(jail);
    copyFileSync(forwarder.hostPath, join(jail, 'forwarder'));
    chmodSync(join(jail, 'forwarder'), 0o755);
    const refused = await exitOf(['chroot', jail, '/forwarder', '-n', '/', '1000', '0:/api.sock']);
    expect(refused.code).toBe(78);
    expect(refused.err).toContain('cannot make its namespaces in /: Operation not permitted');
    const missing = join(dir, 'missing');
    const failed = await exitOf([forwarder.hostPath, '-n', missing, '1000', '0:/api.sock']);
    expect(failed.code).toBe(71);
    expect(failed.err).toContain(`cannot make its namespaces in ${missing}: No such file`);
  });

  it('refuses an argument that is not <port>:<socket path>', async () => {
    const { code, err } = await exitOf([forwarder.hostPath, '7171']);
    expect(code).toBe(64);
    expect(err).toContain('not <port>:<unix socket path>: 7171');
  });
});

describe('the socat forwarder', () => {
  it('forwards two ports with a shell that becomes the last socat', () => {
    const socat = findSandboxForwarder('socat');
    // socat is one of the packages CI installs for the sandboxes.
    expect(socat?.kind).toBe('socat');
    const ports = [
      { port: 7171, socketPath: '/private/api.sock' },
      { port: 7172, socketPath: '/private/proxy.sock' },
    ];
    expect(socat!.command(ports.slice(0, 1), socat!.insidePath)).toEqual([
      socat!.hostPath,
      'TCP-LISTEN:7171,bind=127.0.0.1,fork,reuseaddr',
      'UNIX-CONNECT:/private/api.sock',
    ]);
    expect(socat!.command(ports, socat!.insidePath)).toEqual([
      '/bin/sh',
      '-c',
      `${socat!.hostPath} TCP-LISTEN:7171,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:/private/api.sock & exec ${socat!.hostPath} TCP-LISTEN:7172,bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:/private/proxy.sock`,
    ]);
    expect(socat!.bindArgs()).toEqual([]);
  });
});
