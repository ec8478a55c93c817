import { Logger } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { PROXY_SOCKET_NAME, SANDBOX_PROXY_PORT } from '../../../../../common/egress/egress-policy';
import {
  API_SOCKET_NAME,
  ApiBridge,
  bridgedApiUrl,
  procNetPort,
  SANDBOX_API_PORT,
} from '../../api-bridge';
import { CgroupLimits } from '../../cgroup-limits';
import { sweepOrphanCgroups } from '../../cgroup-sweep';
import { compiledSpawner, preparesInChild, spawnOffLoop } from '../../off-loop-spawn';
import { findSandboxForwarder, PortForward, SandboxForwarder } from '../../sandbox-forwarder';
import { EtcCopies } from './etc-copies';
import { ForwarderNamespace } from './forwarder-namespace';
import { CANNOT_CONFINE, SandboxMaker } from './sandbox-maker';
import { notStarted, SPAWNER_INSIDE } from '../../sandbox-spawner';
import {
  SANDBOX_PATH,
  SANDBOX_PRIVATE_DIR,
  SANDBOX_WORKDIR,
  Sandbox,
  SandboxBackend,
  SandboxError,
  SandboxProcess,
  SandboxSpawnOptions,
  SandboxSpec,
} from '../../sandbox.types';
import { makeFreshDir } from '../../fresh-paths';

const run = promisify(execFile);
const logger = new Logger('Sandbox');

/** The unprivileged user processes run as inside (mapped to the service's own user outside). */
const SANDBOX_UID = 1000;
const SANDBOX_GID = 1000;

/** Top-level system directories: bound read-only, or recreated as the symlinks they are. */
const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The parts of /etc programs need. Not /etc as a whole: it holds the host's own credentials
 * (database client configuration, machine secrets, the service's own config when installed there).
 */
const ETC_ENTRIES = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'gai.conf',
  'gitconfig',
  'host.conf',
  'hosts',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'mime.types',
  'nsswitch.conf',
  'profile',
  'protocols',
  'services',
  'ssl',
  'terminfo',
];

/**
 * Parts of /proc a process that is the host's root to the kernel's permission checks could write
 * to the host's harm (its user namespace maps uid 1000 to the service's uid, 0 when Ambient runs
 * as root): the kernel's settings (`kernel.core_pattern` names a program the host runs as root),
 * sysrq, interrupts, buses and file systems. Bound read-only over themselves, as Docker does.
 */
const PROC_READ_ONLY = ['sys', 'sysrq-trigger', 'irq', 'bus', 'fs'];

/** What Docker also hides of /proc from containers: covered by an empty file or directory. */
const PROC_MASKED = [
  'acpi',
  'asound',
  'interrupts',
  'kcore',
  'keys',
  'latency_stats',
  'timer_list',
  'timer_stats',
  'sched_debug',
  'scsi',
];

/** The sandbox's /etc/passwd and /etc/group: its own user, root and nobody, nothing of the host. */
const PASSWD = `root:x:0:0:root:/root:/usr/sbin/nologin\nagent:x:${SANDBOX_UID}:${SANDBOX_GID}:agent:${SANDBOX_WORKDIR}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
const GROUP = `root:x:0:\nagent:x:${SANDBOX_GID}:\nnogroup:x:65534:\n`;

export interface BubblewrapSettings {
  /** Extra host directories visible read-only at the same path inside. */
  readonlyPaths: string[];
  /** Where per-execution private directories are made (outside every workspace). */
  privateRoot: string;
  /** Path of the `bwrap` binary. */
  bwrap?: string;
  /** 'socat' forwards with socat even where the compiled forwarder was built (its tests). */
  forwarder?: 'native' | 'socat';
  /**
   * What holds an execution's network namespace with its forwarders: its sandbox (bwrap's own
   * network namespace, where the sandbox's spawn helper starts the compiled forwarder: the default
   * where both were built and commands are 'spawner'), the compiled forwarder making it itself,
   * or a `bwrap` around the forwarder (always for socat). The last two are the fallbacks, asked
   * for by the benchmarks' baselines and the tests.
   */
  holder?: 'sandbox' | 'forwarder' | 'bwrap';
  /**
   * What starts an execution's commands: the compiled spawn helper, one inside each execution's
   * sandbox (the default where it was built; see SandboxSpawner), or a bwrap per command (without
   * the helper; asked for by the benchmarks' baseline and its tests).
   */
  commands?: 'spawner' | 'bwrap';
  /**
   * What makes an execution's sandbox when the spawn helper is its pid 1: the compiled spawner
   * itself (`--confine`, bwrap's namespaces and mounts without bwrap's start: the default where it
   * was built; see native/confine.c), or bwrap (AMBIENT_BUBBLEWRAP_CONFINE=false, the benchmarks'
   * baseline). Where the spawner cannot and bwrap can, bwrap makes them from then on.
   */
  maker?: 'spawner' | 'bwrap';
}

/**
 * Linux namespaces through bubblewrap: each process starts in new user, pid, ipc, uts, cgroup and
 * net namespaces (the execution's network namespace has only its loopback, whatever the network
 * mode: `egress` and `allowlist` reach out through the egress proxy's forwarder only), sees the system directories read-only, the workspace
 * read-write, a private /tmp and nothing else of the host, with no capabilities, as uid 1000.
 * All processes of one sandbox share a cgroup with its limits, where cgroups are writable.
 * Processes a command leaves in the background end with it (its pid namespace goes).
 */
export class BubblewrapSandboxBackend implements SandboxBackend {
  readonly name = 'bubblewrap' as const;
  readonly servesEgressProxy = true;
  private readonly bwrap: string;
  /**
   * What forwards the API and the egress proxy into sandboxes (the compiled forwarder, else
   * socat); without one they get no API.
   */
  private readonly forwarder: SandboxForwarder | null;
  /**
   * nsenter, with which commands join their execution's network namespace (see
   * ForwarderNamespace) where the spawn helper cannot (preparesInChild).
   */
  private readonly nsenter: string | null;
  /** /etc as sandboxes see it, in one directory (bound once, not entry by entry). */
  private readonly etc: EtcCopies;
  /** The system directories' arguments, looked up once (sync file system calls, per bwrap before). */
  private readonly systemDirs: string[];
  /**
   * Where Ambient runs as root (its sandboxes' uid 1000 is uid 0 to the kernel's owner checks):
   * what covers parts of /proc after it is mounted, and no user namespace of a sandbox's own (see
   * asRootArgs).
   */
  private readonly asRoot: string[];
  /** Whether the forwarder makes executions' namespaces itself (see startHolder). */
  private forwarderHolds: boolean;
  /**
   * Whether an execution's sandbox holds its network namespace, its spawn helper starting the
   * forwarder in it (where both compiled helpers were built): no holder of the host's then.
   */
  private readonly sandboxHolds: boolean;
  /**
   * The compiled spawn helper (the one this process uses), bound into each execution's sandbox;
   * null: a bwrap per command.
   */
  private readonly spawnerBinary: string | null;
  /** What makes an execution's sandbox around its spawn helper (see BubblewrapSettings.maker). */
  private readonly maker: SandboxMaker;

  constructor(private readonly settings: BubblewrapSettings) {
    this.etc = new EtcCopies(settings.privateRoot, ETC_ENTRIES, { passwd: PASSWD, group: GROUP });
    this.systemDirs = SYSTEM_DIRS.flatMap(systemDirArgs);
    this.asRoot = process.getuid?.() === 0 ? asRootArgs() : [];
    // A path, so that neither sh nor nsenter searches the PATH for it (an exec tried per directory).
    this.bwrap = onPath(settings.bwrap ?? 'bwrap');
    this.forwarder = findSandboxForwarder(settings.forwarder);
    this.nsenter = ['/usr/bin/nsenter', '/bin/nsenter'].find((p) => existsSync(p)) ?? null;
    this.forwarderHolds = settings.holder !== 'bwrap';
    this.sandboxHolds = (settings.holder ?? 'sandbox') === 'sandbox';
    this.spawnerBinary = settings.commands === 'bwrap' ? null : compiledSpawner();
    this.maker = new SandboxMaker(
      this.bwrap,
      settings.maker === 'bwrap' ? null : this.spawnerBinary,
    );
  }

  /** The cgroups of sandboxes whose worker died before closing them (see sweepOrphanCgroups). */
  sweep(): Promise<number> {
    return sweepOrphanCgroups();
  }

  async open(spec: SandboxSpec): Promise<Sandbox> {
    const privateDir = join(this.settings.privateRoot, `${spec.runId}-${spec.executionId}`);
    const proxy = spec.egressProxy ?? null;
    const canEnter = this.nsenter !== null || preparesInChild();
    // Refused before anything is made for the sandbox (nothing to undo).
    if (proxy && !(this.forwarder && canEnter)) {
      throw new SandboxError(
        `network ${spec.network} needs a port forwarder (native/build/ambient-forwarder, or socat) and nsenter (or the compiled spawn helper) on this host: the sandbox reaches the egress proxy through them`,
        'resource_unavailable',
      );
    }
    // The cgroup is made while the private files are written (neither needs the other).
    const cgroupMade = CgroupLimits.create(`${spec.runId}-${spec.executionId}`, spec.limits);
    const etcTaken = this.etc.acquire();
    let files: SandboxFiles;
    let bridge: ApiBridge | null = null;
    try {
      // The copy of /etc has the sandbox's passwd and group already; without one, they are bound.
      files = await writePrivateFiles(privateDir, (await etcTaken) === null);
      bridge =
        spec.apiUrl && this.forwarder
          ? await ApiBridge.listen(join(files.files, API_SOCKET_NAME), spec.apiUrl)
          : null;
      await proxy?.listen(join(files.files, PROXY_SOCKET_NAME));
    } catch (err) {
      await bridge?.close().catch(() => undefined);
      await (await cgroupMade)?.remove();
      (await etcTaken)?.release();
      await rm(privateDir, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
    const cgroup = await cgroupMade;
    const etc = await etcTaken;
    const running = new Set<SandboxProcess>();
    const bwrap = this.bwrap;
    const readonlyPaths = this.settings.readonlyPaths;
    /** Where a path inside is on this host (the system directories are the host's own). */
    /** Where a path inside is on this host; `tenantTree` when it is in the workspace. */
    const hostPathOf = (inside: string): HostPath | null => {
      if (inside === SANDBOX_WORKDIR || inside.startsWith(`${SANDBOX_WORKDIR}/`)) {
        const tenantTree = spec.workspaceDir;
        return { host: tenantTree + inside.slice(SANDBOX_WORKDIR.length), tenantTree };
      }
      if (inside === SANDBOX_PRIVATE_DIR || inside.startsWith(`${SANDBOX_PRIVATE_DIR}/`)) {
        return { host: files.files + inside.slice(SANDBOX_PRIVATE_DIR.length) };
      }
      if (readonlyPaths.some((dir) => inside === dir || inside.startsWith(`${dir}/`))) {
        return { host: inside };
      }
      if (inside === '/tmp' || inside.startsWith('/tmp/')) return null;
      return SYSTEM_DIRS.some((dir) => inside.startsWith(`${dir}/`)) ? { host: inside } : null;
    };
    const procs = cgroup?.procsFiles ?? [];
    const nsenter = this.nsenter;
    /**
     * Starts `command` (bwrap …) in the sandbox's cgroup, before it forks anything, and in the
     * namespaces of `enterPid` when given: by the compiled spawn helper between its fork and the
     * exec, else by a shell (which joins the cgroup) and nsenter it execs. `confine`: the command
     * is the spawner's `--confine`, which the compiled helper makes in its child (no exec of it).
     */
    const launch = (
      command: string[],
      env: Record<string, string>,
      stdin: 'ignore' | 'pipe',
      enterPid?: number,
      confine = false,
    ): SandboxProcess => {
      if (preparesInChild()) {
        return spawnOffLoop(command[0]!, command.slice(1), {
          cwd: '/',
          env,
          stdin,
          joinCgroups: procs,
          ...(enterPid ? { enterNamespacesOf: { pid: enterPid, user: true } } : { confine }),
        });
      }
      const enter = enterPid
        ? [nsenter!, `--target=${enterPid}`, '--user', '--net', '--preserve-credentials', '--']
        : [];
      return spawnOffLoop('/bin/sh', inCgroupShell(procs, [...enter, ...command]), {
        cwd: '/',
        env,
        stdin,
      });
    };
    const forwarded = forwardedPorts(bridge !== null, proxy !== null);
    const forwarder = this.forwarder;
    const spawnerBinary = this.spawnerBinary;
    // With the API or the egress proxy, where both compiled helpers are: the execution's sandbox
    // holds its network namespace, and its spawn helper starts the forwarder in it before it says
    // it is ready (one bwrap per execution, no process of the host's holding a namespace).
    const forwardingInside =
      forwarded.length > 0 &&
      spawnerBinary !== null &&
      forwarder?.kind === 'native' &&
      this.sandboxHolds;
    const spawnerWithForwarder = forwardingInside
      ? await this.maker.startHelper(
          [
            ...this.fixedArgs(spec, files, true, etc?.dir),
            ...forwarder.bindArgs(),
            ...spawnerArgs(spawnerBinary, [
              '--forward',
              ...forwarder.command(insideSandbox(forwarded), forwarder.insidePath),
            ]),
          ],
          (command, confine) => launch(command, { PATH: SANDBOX_PATH }, 'pipe', undefined, confine),
        )
      : null;
    // Else the execution's network namespace is made once, held by its forwarders; commands join
    // it. Otherwise (or if that fails without a proxy) each command makes its own. Awaited here,
    // so that a command never waits behind it: a wrapper that started commands once it reported
    // lost the end of their output under load (its exit came before its last chunks).
    const holder =
      forwarded.length && canEnter && !spawnerWithForwarder
        ? await this.startHolder(
            (kind) =>
              launch(
                this.holderCommand(files, this.forwarder!, forwarded, kind),
                { PATH: SANDBOX_PATH },
                'ignore',
              ),
            forwarded.map(({ port }) => port),
          )
        : null;
    if (proxy && !holder && !spawnerWithForwarder) {
      await Promise.all([bridge?.close(), cgroup?.remove()]);
      etc?.release();
      await rm(privateDir, { recursive: true, force: true });
      throw new SandboxError(
        "cannot start the forwarder of the sandbox's egress proxy",
        'resource_unavailable',
      );
    }
    // A command without the holder starts its own API forwarder, which it must see.
    const ownForwarder =
      forwarded.length > 0 && !holder && !spawnerWithForwarder && forwarder !== null;
    const fixedArgs = [
      ...this.fixedArgs(spec, files, holder === null, etc?.dir),
      ...(ownForwarder ? forwarder.bindArgs() : []),
    ];
    // The holder's forwarders listen already (ForwarderNamespace.start waited for them); a
    // sandbox without the holder starts its own API forwarder.
    const entry = ownForwarder ? forwarderEntry(forwarder) : [];
    const enterAtOpen = holder ? holder.enterPid() : undefined;
    // Not with a forwarder of the sandbox's own: it would be the helper's child, not a command's.
    // Not again when the helper did not start with the forwarder: commands get a bwrap each.
    const spawner =
      spawnerWithForwarder ??
      (spawnerBinary && enterAtOpen !== null && !ownForwarder && !forwardingInside
        ? await this.maker.startHelper(
            [...fixedArgs, ...spawnerArgs(spawnerBinary, [])],
            (command, confine) =>
              launch(command, { PATH: SANDBOX_PATH }, 'pipe', enterAtOpen, confine),
          )
        : null);

    const start = (file: string, args: string[], options: SandboxSpawnOptions): SandboxProcess => {
      if (spawner) return spawner.spawn(file, args, options);
      const enterPid = holder ? holder.enterPid() : undefined;
      if (enterPid === null) return notStarted(file, 'the sandbox network namespace is gone');
      const bwrapArgs = [
        ...fixedArgs,
        '--chdir',
        options.cwd ?? SANDBOX_WORKDIR,
        '--',
        ...entry,
        file,
        ...args,
      ];
      const proc = launch([bwrap, ...bwrapArgs], options.env, options.stdin ?? 'ignore', enterPid);
      running.add(proc);
      void proc.exited.then(() => running.delete(proc));
      return proc;
    };

    const sandbox: Sandbox = {
      backend: this.name,
      workdir: SANDBOX_WORKDIR,
      privateDir: { host: files.files, inside: SANDBOX_PRIVATE_DIR },
      path: SANDBOX_PATH,
      apiUrl: bridge ? bridgedApiUrl(spec.apiUrl!) : null,
      spawn(file: string, args: string[], options: SandboxSpawnOptions): SandboxProcess {
        if (!programExists(file, options, hostPathOf)) return notStarted(file);
        return start(file, args, options);
      },
      limitHit: () => Promise.resolve(cgroup?.limitHit() ?? null),
      adopt: () => Promise.resolve(),
      async close() {
        for (const proc of running) proc.kill();
        try {
          await Promise.all([spawner?.close(), holder?.stop(), bridge?.close()]);
        } finally {
          // Whatever failed above, the group goes (with whatever still runs in it).
          await cgroup?.remove();
          etc?.release();
          await rm(privateDir, { recursive: true, force: true });
        }
      },
    };
    return sandbox;
  }

  /**
   * The execution's namespace held by the forwarder itself where it can make it, else by a bwrap
   * around it: a host may let bwrap make user namespaces and refuse other programs (Ubuntu's
   * AppArmor restriction of unprivileged user namespaces). A forwarder that says the host refused
   * (exit status CANNOT_CONFINE: EPERM or EACCES) is not asked again by this backend; one that
   * failed otherwise is, at the next open. Null when neither holder started.
   */
  private async startHolder(
    launchHolder: (holder: 'forwarder' | 'bwrap') => SandboxProcess,
    ports: number[],
  ): Promise<ForwarderNamespace | null> {
    if (this.forwarderHolds && this.forwarder?.namespacedCommand) {
      const forwarder = launchHolder('forwarder');
      let said = '';
      forwarder.stderr.on('data', (chunk: Buffer) => (said = (said + String(chunk)).slice(-500)));
      const held = await ForwarderNamespace.start(forwarder, ports).catch(() => null);
      if (held) return held;
      forwarder.kill();
      if ((await forwarder.exited).code === CANNOT_CONFINE) {
        this.forwarderHolds = false;
        logger.warn(
          `the forwarder cannot make a sandbox's namespaces on this host (${said.trim()}): bwrap holds them instead (a process start and its mounts more per execution)`,
        );
      }
    }
    return ForwarderNamespace.start(launchHolder('bwrap'), ports).catch(() => null);
  }

  /**
   * What holds the execution's network namespace with its forwarders and reports it as
   * `bwrap --info-fd` does: the compiled forwarder making the namespaces itself, seeing only the
   * private directory (an exec and a fork, no mount: ~6–10 ms of CPU less per execution than a
   * bwrap around it on a small VM, docs/PERFORMANCE.md); else a bwrap of its own around it.
   */
  private holderCommand(
    files: SandboxFiles,
    forwarder: SandboxForwarder,
    forwarded: ForwardedPort[],
    holder: 'forwarder' | 'bwrap',
  ): string[] {
    if (forwarder.namespacedCommand && holder === 'forwarder') {
      const ports = forwarded.map(({ port, socket }) => ({ port, socketPath: `/${socket}` }));
      return forwarder.namespacedCommand(ports, files.files, SANDBOX_UID);
    }
    return [
      this.bwrap,
      '--info-fd',
      '1',
      ...this.forwarderHolderArgs(files, forwarder, forwarded.length),
      '--',
      ...forwarder.command(insideSandbox(forwarded), forwarder.insidePath),
    ];
  }

  /**
   * The forwarder's own sandbox when a bwrap holds the namespace: its namespaces, the system
   * directories, the forwarder and the bridge socket's directory, nothing else (a forwarder needs
   * no more; each mount costs the kernel time per sandbox); /dev/null too when a `sh` starts socats
   * in the background.
   */
  private forwarderHolderArgs(
    files: SandboxFiles,
    forwarder: SandboxForwarder,
    ports: number,
  ): string[] {
    const background = forwarder.kind === 'socat' && ports > 1;
    return [
      // sh gives a background command /dev/null as its stdin, and fails without one.
      ...(background ? ['--dev-bind', '/dev/null', '/dev/null'] : []),
      ...namespaceArgs(true),
      ...this.systemDirs,
      ...forwarder.bindArgs(),
      '--ro-bind-try',
      '/etc/ld.so.cache',
      '/etc/ld.so.cache',
      '--ro-bind',
      files.files,
      SANDBOX_PRIVATE_DIR,
    ];
  }

  /** `ownNetwork`: a new network namespace (else the caller's: the execution's, joined). */
  private fixedArgs(
    spec: SandboxSpec,
    files: SandboxFiles,
    ownNetwork: boolean,
    /** A copy of /etc as sandboxes see it (EtcCopies); without one, its parts bound one by one. */
    etcDir?: string,
  ): string[] {
    const args = [...namespaceArgs(ownNetwork), ...this.systemDirs];
    if (etcDir) {
      args.push('--ro-bind', etcDir, '/etc');
    } else {
      for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
      args.push('--ro-bind', files.passwd, '/etc/passwd', '--ro-bind', files.group, '/etc/group');
    }
    args.push(
      '--proc',
      '/proc',
      ...this.asRoot,
      '--dev',
      '/dev',
      '--tmpfs',
      '/tmp',
      '--bind',
      spec.workspaceDir,
      SANDBOX_WORKDIR,
      '--ro-bind',
      files.files,
      SANDBOX_PRIVATE_DIR,
    );
    // After the private /tmp, so a directory under /tmp stays visible.
    for (const path of this.settings.readonlyPaths) args.push('--ro-bind', path, path);
    return args;
  }
}

/**
 * bwrap's last arguments for an execution's spawn helper: bound read-only, run as the sandbox's
 * pid 1 with `helperArgs` after `--sandbox`.
 */
function spawnerArgs(spawnerBinary: string, helperArgs: string[]): string[] {
  return [
    '--ro-bind',
    spawnerBinary,
    SPAWNER_INSIDE,
    '--as-pid-1',
    '--chdir',
    '/',
    '--',
    SPAWNER_INSIDE,
    '--sandbox',
    ...helperArgs,
  ];
}

/** `sh -c` arguments: the shell joins the cgroups (`procs`), then execs `command`. */
function inCgroupShell(procs: string[], command: string[]): string[] {
  const joinCgroup = 'for f in "$@"; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; done';
  return [
    '-c',
    `${joinCgroup}; shift ${procs.length + 1}; exec "$@"`,
    'sh',
    ...procs,
    '--',
    ...command,
  ];
}

/** The private files of one execution's sandbox (host paths). */
interface SandboxFiles {
  /** Written only when the sandbox has no copy of /etc (see EtcCopies). */
  passwd: string;
  group: string;
  /** The private directory processes inside see at SANDBOX_PRIVATE_DIR. */
  files: string;
}

/** Makes the execution's private directory afresh, with its passwd and group when `withPasswd`. */
async function writePrivateFiles(privateDir: string, withPasswd: boolean): Promise<SandboxFiles> {
  await makeFreshDir(privateDir);
  await mkdir(join(privateDir, 'files'), { mode: 0o700 });
  const files: SandboxFiles = {
    passwd: join(privateDir, 'passwd'),
    group: join(privateDir, 'group'),
    files: join(privateDir, 'files'),
  };
  if (withPasswd) {
    await Promise.all([writeFile(files.passwd, PASSWD), writeFile(files.group, GROUP)]);
  }
  return files;
}

/** bwrap's namespaces, user and capabilities; `ownNetwork`: a new network namespace too. */
function namespaceArgs(ownNetwork: boolean): string[] {
  return [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(ownNetwork ? ['--unshare-net'] : []),
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_GID),
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'ambient-sandbox',
  ];
}

/** A socket in the private directory and the loopback port its forwarder listens on. */
interface ForwardedPort {
  port: number;
  socket: string;
}

/** The forwarders of a sandbox: the API's and the egress proxy's, those it has. */
function forwardedPorts(api: boolean, proxy: boolean): ForwardedPort[] {
  return [
    ...(api ? [{ port: SANDBOX_API_PORT, socket: API_SOCKET_NAME }] : []),
    ...(proxy ? [{ port: SANDBOX_PROXY_PORT, socket: PROXY_SOCKET_NAME }] : []),
  ];
}

/** The forwarded ports with their sockets' paths as a sandbox sees them. */
function insideSandbox(ports: ForwardedPort[]): PortForward[] {
  return ports.map(({ port, socket }) => ({
    port,
    socketPath: `${SANDBOX_PRIVATE_DIR}/${socket}`,
  }));
}

/**
 * `sh -c` that starts the API forwarder in the background, waits (at most ~2 s) until it listens
 * on the sandbox's loopback, then becomes the command (a sandbox without the forwarders'
 * namespace has no egress proxy: see open).
 */
function forwarderEntry(forwarder: SandboxForwarder): string[] {
  const api = insideSandbox([{ port: SANDBOX_API_PORT, socket: API_SOCKET_NAME }]);
  const hexPort = procNetPort(SANDBOX_API_PORT);
  const script =
    `${forwarder.command(api, forwarder.insidePath).join(' ')} 2>/dev/null & ` +
    `i=0; while ! grep -q ':${hexPort} 00000000:0000 0A' /proc/net/tcp; do ` +
    `i=$((i+1)); [ $i -gt 400 ] && break; sleep 0.005; done; exec "$@"`;
  return ['/bin/sh', '-c', script, 'sh'];
}

/**
 * Whether `file` can be found inside the sandbox (a path, or a name on the PATH it is given), as
 * its mounts map to this host. bwrap itself reports a missing program only as exit code 1.
 */
function programExists(
  file: string,
  options: SandboxSpawnOptions,
  hostPathOf: (inside: string) => HostPath | null,
): boolean {
  const found = (inside: string): boolean => {
    const path = hostPathOf(inside);
    // Unknowable from here (a private /tmp): let the sandbox try.
    if (path === null) return inside.startsWith('/tmp');
    return path.tenantTree ? existsInTree(path.tenantTree, path.host) : existsSync(path.host);
  };
  if (file.includes('/')) {
    return found(posix.resolve(options.cwd ?? SANDBOX_WORKDIR, file));
  }
  const path = options.env.PATH ?? SANDBOX_PATH;
  return path.split(':').some((dir) => dir.startsWith('/') && found(posix.join(dir, file)));
}

/** A path inside a sandbox as this host sees it; `tenantTree`: the tenant's tree it is in. */
interface HostPath {
  host: string;
  tenantTree?: string;
}

/**
 * Whether `host`, a path in the tenant's `tree`, exists, looking through none of its links: a link
 * in a workspace means what it means inside the sandbox, and followed on this host it would say
 * whether a host file exists (SECURITY.md, classes 1 and 5). One on the way: the sandbox tries.
 */
function existsInTree(tree: string, host: string): boolean {
  let at = tree;
  for (const part of host.slice(tree.length).split('/').filter(Boolean)) {
    at = join(at, part);
    const stat = lstatSync(at, { throwIfNoEntry: false });
    if (!stat) return false;
    if (stat.isSymbolicLink()) return true;
  }
  return true;
}

/** `file`'s path on this process's PATH (unchanged when it holds a slash or is not found). */
function onPath(file: string): string {
  if (file.includes('/')) return file;
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(':')) {
    if (dir.startsWith('/') && existsSync(join(dir, file))) return join(dir, file);
  }
  return file;
}

/**
 * bwrap's arguments, after `--proc`, where Ambient runs as root. They make PROC_READ_ONLY read-only
 * and cover PROC_MASKED, for the entries this kernel has (a mount over an entry /proc lacks
 * fails); the read-only ones are bound from this host's /proc: what they show still depends on
 * the reader (its network, UTS and IPC namespaces). And no user namespace of the sandbox's own
 * (`--disable-userns`): in one, it could mount the cgroup hierarchies, whose files are root's, and
 * rewrite its own limits (none, as in a Docker container).
 */
function asRootArgs(): string[] {
  const has = (entry: string) => existsSync(`/proc/${entry}`);
  return [
    ...PROC_READ_ONLY.filter(has).flatMap((entry) => [
      '--ro-bind',
      `/proc/${entry}`,
      `/proc/${entry}`,
    ]),
    ...PROC_MASKED.filter(has).flatMap((entry) =>
      lstatSync(`/proc/${entry}`).isDirectory()
        ? ['--tmpfs', `/proc/${entry}`, '--remount-ro', `/proc/${entry}`]
        : ['--ro-bind', '/dev/null', `/proc/${entry}`],
    ),
    '--disable-userns',
  ];
}

function systemDirArgs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (lstatSync(dir).isSymbolicLink()) return ['--symlink', readlinkSync(dir), dir];
  return ['--ro-bind', dir, dir];
}

/** Whether `bwrap` can make a sandbox here (installed, and user namespaces allowed). */
export async function bubblewrapWorks(bwrap = 'bwrap'): Promise<{ ok: boolean; detail: string }> {
  try {
    await run(
      bwrap,
      [
        '--unshare-user',
        '--unshare-pid',
        '--unshare-net',
        '--die-with-parent',
        ...SYSTEM_DIRS.flatMap(systemDirArgs),
        '--proc',
        '/proc',
        '--',
        '/bin/true',
      ],
      { timeout: 5000 },
    );
    return { ok: true, detail: 'bwrap works' };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') return { ok: false, detail: `${bwrap} is not installed` };
    return {
      ok: false,
      detail:
        `${bwrap} fails (${(e.stderr || e.message).trim()}): allow unprivileged user namespaces ` +
        '(sysctl kernel.unprivileged_userns_clone=1, and kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu) or run as root',
    };
  }
}

/** Private directories live beside the workspaces, under a name no run id can take. */
export function privateRootFor(workspaceRoot: string): string {
  return join(workspaceRoot, '.sandbox');
}
