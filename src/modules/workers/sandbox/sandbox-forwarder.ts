import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOX_API_HOST } from './api-bridge';
import { builtProgramPath } from './native-spawner';

/** Built by `scripts/build-native.mjs` from native/forwarder.c. */
export const NATIVE_FORWARDER_RELATIVE_PATH = join('native', 'build', 'ambient-forwarder');

/** A loopback port of a sandbox and the socket (as the forwarder sees its path) it leads to. */
export interface PortForward {
  port: number;
  socketPath: string;
}

/**
 * The program that listens on a sandbox's loopback ports and forwards each connection to one of
 * Ambient's Unix sockets (the API bridge's, the egress proxy's): the compiled forwarder, one
 * process for every port, where it was built; else socat, one process per port.
 */
export interface SandboxForwarder {
  readonly kind: 'native' | 'socat';
  /** The program on this host. */
  readonly hostPath: string;
  /**
   * Where a sandbox that does not see the host's file system finds the program, bound there
   * read-only (see bindArgs); socat is under /usr, which sandboxes see already.
   */
  readonly insidePath: string;
  /** bwrap arguments that make the program visible at `insidePath` (none for socat). */
  bindArgs(): string[];
  /**
   * The command forwarding every one of `ports` until it is killed; `program` is where it runs
   * the program from (`insidePath` in a sandbox, `hostPath` on this host).
   */
  command(ports: PortForward[], program: string): string[];
  /**
   * The compiled forwarder's command that makes an execution's user, network, IPC and pid
   * namespaces itself, `uid` inside for this host's user, and sees only `root` (socket paths as
   * seen there): see `-n` in native/forwarder.c. Null for socat, which a bwrap has to hold instead.
   */
  namespacedCommand: ((ports: PortForward[], root: string, uid: number) => string[]) | null;
}

/** Where sandboxes see the compiled forwarder: a path of its own at the top of their tree. */
const NATIVE_INSIDE_PATH = '/.ambient-forwarder';

const native = (hostPath: string): SandboxForwarder => ({
  kind: 'native',
  hostPath,
  insidePath: NATIVE_INSIDE_PATH,
  bindArgs: () => ['--ro-bind', hostPath, NATIVE_INSIDE_PATH],
  command: (ports, program) => [program, ...forwardArgs(ports)],
  namespacedCommand: (ports, root, uid) => [
    hostPath,
    '-n',
    root,
    String(uid),
    ...forwardArgs(ports),
  ],
});

function forwardArgs(ports: PortForward[]): string[] {
  return ports.map((p) => `${p.port}:${p.socketPath}`);
}

/**
 * socat arguments that listen on the sandbox's loopback and forward to the socket at
 * `socketPath` (a path as seen where socat runs).
 */
function socatArgs({ port, socketPath }: PortForward): string[] {
  return [
    `TCP-LISTEN:${port},bind=${SANDBOX_API_HOST},fork,reuseaddr`,
    `UNIX-CONNECT:${socketPath}`,
  ];
}

const socat = (hostPath: string): SandboxForwarder => ({
  kind: 'socat',
  hostPath,
  insidePath: hostPath,
  bindArgs: () => [],
  command(ports, program) {
    const lines = ports.map((p) => [program, ...socatArgs(p)]);
    if (lines.length === 1) return lines[0]!;
    // Every socat but the last in the background; the last one is what the shell becomes.
    const last = lines.pop()!;
    const background = lines.map((line) => `${line.join(' ')} &`).join(' ');
    return ['/bin/sh', '-c', `${background} exec ${last.join(' ')}`];
  },
  namespacedCommand: null,
});

/**
 * The forwarder this host has: `prefer` 'socat' skips the compiled one (tests of the socat path);
 * null when there is neither.
 */
export function findSandboxForwarder(
  prefer: 'native' | 'socat' = 'native',
): SandboxForwarder | null {
  const compiled = prefer === 'native' ? builtProgramPath(NATIVE_FORWARDER_RELATIVE_PATH) : null;
  if (compiled) return native(compiled);
  const socatPath = ['/usr/bin/socat', '/bin/socat'].find((p) => existsSync(p));
  return socatPath ? socat(socatPath) : null;
}
