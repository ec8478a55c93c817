import type { SandboxSettings } from '../../../config/app-config';
import type { Readable, Writable } from 'node:stream';

/** A registered backend's name (SandboxBackendFactory: the built-ins docker, bubblewrap, process). */
export type SandboxBackendName = string;

import type { NetworkMode } from '../../../common/egress/egress-policy';

export { NETWORK_POLICIES, type NetworkPolicy } from '../../environments';

/** Resource limits of one sandbox: all its processes together. */
export interface SandboxLimits {
  memoryMb: number;
  pids: number;
  cpus: number;
}

/** What one execution's sandbox is made from. */
export interface SandboxSpec {
  runId: string;
  /** The run's execution number (the timeline's execution_id). */
  executionId: number;
  teamId: string;
  /** Host directory that becomes the sandbox's read-write workspace. */
  workspaceDir: string;
  /** Container image (docker backend): the environment's `docker_image`; null = the default. */
  image: string | null;
  /**
   * An environment snapshot's image (docker backend): the container is made from it instead of
   * `image`, never from the warm pool. Null/absent: none.
   */
  snapshotImage?: string | null;
  /**
   * The environment's network mode. Every mode gives the sandbox a network namespace of its own
   * with only its loopback; `egress` and `allowlist` add `egressProxy`, its only way out.
   */
  network: NetworkMode;
  /**
   * The execution's egress proxy (`egress` and `allowlist`): the backend serves it on
   * PROXY_SOCKET_NAME (docker: a name of its own per execution) in the private directory and forwards SANDBOX_PROXY_HOST:PORT inside the
   * sandbox's namespace to it, as it does the API. Null/absent: no way out at all.
   */
  egressProxy?: SandboxEgressProxy | null;
  limits: SandboxLimits;
  /**
   * The Ambient API base URL this process reaches; a backend that can bridges it into the
   * sandbox (`Sandbox.apiUrl`), whatever the network policy. Null: no API for the sandbox.
   */
  apiUrl?: string | null;
}

/** What a backend needs of an execution's egress proxy (see EgressProxy). */
export interface SandboxEgressProxy {
  /** Serves the proxy on a Unix socket at `socketPath` (removed and closed with the proxy). */
  listen(socketPath: string): Promise<void>;
}

export interface SandboxSpawnOptions {
  /** Working directory as seen inside the sandbox; the workspace when unset. */
  cwd?: string;
  /** The complete environment of the process; nothing else is inherited. */
  env: Record<string, string>;
  /** Standard input: ignored unless 'pipe'. */
  stdin?: 'ignore' | 'pipe';
}

export interface SandboxExit {
  /** Null when the process was killed by a signal or never started. */
  code: number | null;
  /** The signal that killed it, when one did (e.g. SIGKILL). */
  signal: string | null;
  /** Set when the process could not be started at all (ENOENT: no such program in the sandbox). */
  startError?: NodeJS.ErrnoException;
}

/** A process started inside a sandbox. */
export interface SandboxProcess {
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Settles once the process has ended (never rejects). */
  readonly exited: Promise<SandboxExit>;
  /** Kills the process and everything it started (idempotent). */
  kill(): void;
}

/**
 * One execution's isolated place to run agent-controlled programs: every command, setup step,
 * vendor CLI and stdio MCP server of the execution runs through `spawn`. Closed when the
 * execution ends, which kills whatever is still running in it.
 */
export interface Sandbox {
  readonly backend: SandboxBackendName;
  /** The workspace as processes inside see it (`/workspace`; the host directory for `process`). */
  readonly workdir: string;
  /**
   * A directory private to this execution for Ambient's own files (vendor MCP configuration):
   * `host` is where Ambient writes them, `inside` where the sandbox's processes read them.
   */
  readonly privateDir: { host: string; inside: string };
  /** PATH for processes inside the sandbox. */
  readonly path: string;
  /** The Ambient API base URL as processes inside reach it; null/absent when they cannot. */
  readonly apiUrl?: string | null;
  spawn(file: string, args: string[], options: SandboxSpawnOptions): SandboxProcess;
  /**
   * Why a process that ended by SIGKILL without Ambient killing it was killed, when one of the
   * sandbox's limits did it ("out of memory: the sandbox's limit is 512 MiB"); null otherwise.
   */
  limitHit(): Promise<string | null>;
  /**
   * Why the sandbox can run nothing anymore (its container was removed, the Docker daemon does not
   * answer); null while it can, or once it is being closed. Asked only after a command ended
   * without an exit code, or killed (SIGKILL, 137) neither by Ambient nor by a limit; it may
   * take a moment (docker looks again while a removal settles). Absent on backends whose
   * sandboxes cannot vanish under a run.
   */
  lost?(): Promise<string | null>;
  /** Makes files Ambient wrote into the workspace usable by the sandbox's own user. */
  adopt(hostPath: string): Promise<void>;
  /**
   * Keeps the sandbox's own filesystem (what setup left outside the workspace) as the snapshot
   * image of `of` (docker: `docker commit`); its size in bytes. Absent on backends whose
   * workspace is all that setup leaves.
   */
  commitSnapshot?(of: { teamId: string; environmentId: string; key: string }): Promise<number>;
  /** Kills everything still running and removes the sandbox (idempotent). */
  close(): Promise<void>;
}

/** What `GET /health` tells about the sandbox in use. */
export interface SandboxDescription {
  backend: SandboxBackendName | 'unavailable';
  isolated: boolean;
  detail?: string;
}

/** What an extension's sandbox backend is made from when AMBIENT_SANDBOX names it. */
export interface SandboxBackendContext {
  settings: SandboxSettings;
  workspaceRoot: string;
  /** Names this deployment (or self-hosted worker) on shared infrastructure. */
  deployment: string;
  /** Where a backend with a warm pool reports its hand-outs (Prometheus in Ambient's workers). */
  metrics?: SandboxPoolMetrics;
}

/**
 * How a sandbox was had: `hit` from the warm pool, `miss` made on demand because the pool had
 * none ready, `bypass` made on demand because the pool does not serve such sandboxes (egress).
 */
export type SandboxHandout = 'hit' | 'miss' | 'bypass';

export interface SandboxPoolMetrics {
  /** A sandbox's container is ready for commands, `seconds` after it was asked for. */
  handout(result: SandboxHandout, seconds: number): void;
  /**
   * A sandbox's container never became ready (its start failed, or the sandbox was closed first:
   * a cancelled run), `seconds` after it was asked for.
   */
  handoutFailed?(result: SandboxHandout, seconds: number): void;
  /** What became of a closed sandbox's pooled container (see container-returns.ts). */
  returned?(outcome: string): void;
}

/** Whether a backend works on this host, and what start-up says about it. */
export type SandboxProbe =
  { works: true; detail?: string; warning?: string } | { works: false; detail: string };

/**
 * A sandbox backend, registered by an extension (the built-ins docker, bubblewrap and process by
 * Ambient's own) and chosen by AMBIENT_SANDBOX=<name>; `auto` takes the first of docker and
 * bubblewrap whose probe says it works.
 */
export interface SandboxBackendFactory {
  readonly name: string;
  /** False when programs are not isolated from the host (start-up then warns). */
  readonly isolated: boolean;
  /** Checks the host once at start-up; a backend without a probe is taken as working. */
  probe?(context: SandboxBackendContext): Promise<SandboxProbe>;
  create(context: SandboxBackendContext): SandboxBackend;
}

/** One way of making sandboxes. */
export interface SandboxBackend {
  readonly name: SandboxBackendName;
  /**
   * Whether it serves `spec.egressProxy` as its sandboxes' only way out (docker, bubblewrap).
   * Without it, `allowlist` environments do not run on it, and `egress` is whatever it does.
   */
  readonly servesEgressProxy?: boolean;
  /** Throws SandboxError with a message a user can act on (image pull failure, daemon gone…). */
  open(spec: SandboxSpec): Promise<Sandbox>;
  /**
   * Removes sandboxes a crashed process left behind: those whose execution `isLive` denies.
   * Returns how many were removed.
   */
  sweep?(isLive: (runId: string, executionId: number) => Promise<boolean>): Promise<number>;
  /** Starts making sandboxes ahead of demand (a warm pool), when the backend keeps one. */
  warm?(): void;
  /**
   * A shutdown begins while runs still end in their sandboxes: makes no more ahead of demand and
   * starts removing those not handed out, without waiting (drain waits for them).
   */
  stopWarming?(): void;
  /**
   * Removes the sandboxes made ahead of demand and makes no more (at shutdown); may answer false
   * when it stopped waiting before all were removed (the sweep removes the rest), which is logged.
   */
  drain?(): Promise<boolean | void>;
}

/**
 * A sandbox could not be made. `code` says whose problem it is: the run's (an image that does not
 * exist: environment_setup_failed) or the service's (no backend works: resource_unavailable).
 */
export class SandboxError extends Error {
  constructor(
    message: string,
    readonly code: 'environment_setup_failed' | 'resource_unavailable',
  ) {
    super(message);
  }
}

/**
 * The sandbox of a running execution is gone (see Sandbox.lost): nothing more can run in it, so
 * the execution ends in ERROR with this code rather than handing the model a failed command.
 */
export class SandboxLostError extends SandboxError {
  constructor(why: string) {
    super(`the sandbox was lost: ${why}`, 'resource_unavailable');
  }
}

/** Where a sandbox's workspace and private directory appear inside it (docker and bubblewrap). */
export const SANDBOX_WORKDIR = '/workspace';
export const SANDBOX_PRIVATE_DIR = '/run/ambient';
/** PATH inside container and bubblewrap sandboxes. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Labels every Ambient container carries (docker backend). */
export const SANDBOX_LABELS = {
  managed: 'dev.ambient.sandbox',
  /** Which Ambient deployment made it (several may share one daemon). */
  deployment: 'dev.ambient.deployment',
  run: 'dev.ambient.run-id',
  execution: 'dev.ambient.execution-id',
  team: 'dev.ambient.team-id',
  /** A warm pool's container: the process that made it (see pool-owner.ts); no run labels. */
  poolOwner: 'dev.ambient.pool-owner',
} as const;
