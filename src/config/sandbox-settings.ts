import { ConfigError } from './config-error';
import { DOCKER_IMAGES_SETTING, parseDockerImages } from './docker-images';
import type { Setting } from './setting-values';

export const SANDBOX_SETTINGS_BACKENDS = ['auto', 'docker', 'bubblewrap', 'process'] as const;

export interface SandboxSettings {
  /** `auto`: docker when a daemon answers, else bubblewrap when bwrap works, else none (runs fail). */
  /** One of SANDBOX_SETTINGS_BACKENDS, or a backend an extension registers (checked at start-up). */
  backend: string;
  /** Network policy of environments that set none (and of runs without an environment). */
  network: 'none' | 'egress';
  /** Default limits of one sandbox, and the most an environment may ask for. */
  memoryMb: number;
  pids: number;
  cpus: number;
  maxMemoryMb: number;
  maxPids: number;
  maxCpus: number;
  /** bubblewrap: extra host directories visible read-only inside (comma-separated). */
  readonlyPaths: string;
  bubblewrap?: {
    /**
     * Each execution's sandbox made by the compiled spawner itself where it was built (unset: on;
     * native/confine.c: bwrap's namespaces and mounts from one static exec); false: by bwrap.
     */
    confine?: boolean;
  };
  docker: {
    /** Image of runs whose environment names none. */
    defaultImage: string;
    /** AMBIENT_DOCKER_IMAGES as set: what environments may name (see docker-images.ts). */
    images?: string;
    /** `user[:group]` processes run as inside containers (never root). */
    user: string;
    /** OCI runtime, e.g. runsc (gVisor); unset = the daemon's default. */
    runtime?: string;
    /** Warm pool: ready containers of the default image (0 or unset: no pool). */
    poolSize?: number;
    /** Warm pool: the most ready containers of one image after a burst of demand. */
    poolMax?: number;
    /**
     * Commands through each container's launcher instead of a `docker exec` each (unset: on;
     * the backend still uses `docker exec` where the launcher cannot work).
     */
    launcher?: boolean;
    /**
     * The launcher becomes the compiled spawner where it was built (unset: on): one fork and exec
     * per command in the container instead of the shell launcher's script and FIFOs.
     */
    spawner?: boolean;
    /**
     * Warm pool: a closed sandbox's container goes back to the pool once emptied and checked
     * (see container-returns.ts) instead of being removed (unset: on).
     */
    poolReuse?: boolean;
  };
}

export const SANDBOX_SETTINGS: Setting[] = [
  {
    path: 'sandbox.backend',
    env: 'AMBIENT_SANDBOX',
    kind: 'string',
  },
  {
    path: 'sandbox.network',
    env: 'AMBIENT_SANDBOX_NETWORK',
    kind: 'string',
    oneOf: ['none', 'egress'],
  },
  { path: 'sandbox.memoryMb', env: 'AMBIENT_SANDBOX_MEMORY_MB', kind: 'int', min: 16 },
  { path: 'sandbox.pids', env: 'AMBIENT_SANDBOX_PIDS', kind: 'int', min: 8 },
  { path: 'sandbox.cpus', env: 'AMBIENT_SANDBOX_CPUS', kind: 'number', min: 0.1 },
  { path: 'sandbox.maxMemoryMb', env: 'AMBIENT_SANDBOX_MAX_MEMORY_MB', kind: 'int', min: 16 },
  { path: 'sandbox.maxPids', env: 'AMBIENT_SANDBOX_MAX_PIDS', kind: 'int', min: 8 },
  { path: 'sandbox.maxCpus', env: 'AMBIENT_SANDBOX_MAX_CPUS', kind: 'number', min: 0.1 },
  {
    path: 'sandbox.readonlyPaths',
    env: 'AMBIENT_SANDBOX_READONLY_PATHS',
    kind: 'string',
    optional: true,
  },
  { path: 'sandbox.bubblewrap.confine', env: 'AMBIENT_BUBBLEWRAP_CONFINE', kind: 'bool' },
  { path: 'sandbox.docker.defaultImage', env: 'AMBIENT_DOCKER_IMAGE', kind: 'string' },
  { path: 'sandbox.docker.images', env: DOCKER_IMAGES_SETTING, kind: 'string', optional: true },
  { path: 'sandbox.docker.user', env: 'AMBIENT_DOCKER_USER', kind: 'string' },
  {
    path: 'sandbox.docker.runtime',
    env: 'AMBIENT_DOCKER_RUNTIME',
    kind: 'string',
    optional: true,
  },
  { path: 'sandbox.docker.poolSize', env: 'AMBIENT_DOCKER_POOL_SIZE', kind: 'int', min: 0 },
  { path: 'sandbox.docker.poolMax', env: 'AMBIENT_DOCKER_POOL_MAX', kind: 'int', min: 0 },
  { path: 'sandbox.docker.launcher', env: 'AMBIENT_DOCKER_LAUNCHER', kind: 'bool' },
  { path: 'sandbox.docker.spawner', env: 'AMBIENT_DOCKER_SPAWNER', kind: 'bool' },
  { path: 'sandbox.docker.poolReuse', env: 'AMBIENT_DOCKER_POOL_REUSE', kind: 'bool' },
];

export function checkSandboxSettings(sandbox: SandboxSettings): void {
  sandbox.readonlyPaths ??= '';
  const pairs = [
    [
      'AMBIENT_SANDBOX_MEMORY_MB',
      sandbox.memoryMb,
      'AMBIENT_SANDBOX_MAX_MEMORY_MB',
      sandbox.maxMemoryMb,
    ],
    ['AMBIENT_SANDBOX_PIDS', sandbox.pids, 'AMBIENT_SANDBOX_MAX_PIDS', sandbox.maxPids],
    ['AMBIENT_SANDBOX_CPUS', sandbox.cpus, 'AMBIENT_SANDBOX_MAX_CPUS', sandbox.maxCpus],
  ] as const;
  for (const [name, value, maxName, max] of pairs) {
    if (value > max) throw new ConfigError(`${name}: must be at most ${maxName} (${max})`);
  }
  if (/^(0|root)(:|$)/.test(sandbox.docker.user)) {
    throw new ConfigError('AMBIENT_DOCKER_USER: must not be root (use e.g. 1000:1000)');
  }
  try {
    parseDockerImages(sandbox.docker.images, sandbox.docker.defaultImage);
  } catch (err) {
    throw new ConfigError(`${DOCKER_IMAGES_SETTING}: ${(err as Error).message}`);
  }
}
