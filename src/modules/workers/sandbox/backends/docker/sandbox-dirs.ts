import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, readdir, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  forgetCancelled,
  forgetSlots,
  makeFifos,
  prepareSlots,
  spareSlotNames,
} from './container-launcher';
import { KILL_FIFO, killerDirOf, VERDICT_FIFO } from './container-killer';
import { forgetContainerSpawners, spawnerEventsFifo } from './container-spawner';
import type { SandboxSpec } from '../../sandbox.types';

/** `uid[:gid]` as numbers, or null for user names (then Ambient cannot chown to them). */
export function numericUser(user: string): { uid: number; gid: number } | null {
  const match = /^(\d+)(?::(\d+))?$/.exec(user.trim());
  if (!match) return null;
  const uid = Number(match[1]);
  return { uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

export function containerName(spec: Pick<SandboxSpec, 'runId' | 'executionId'>): string {
  return `ambient-${spec.runId.replace(/[^a-zA-Z0-9_.-]/g, '_')}-${spec.executionId}`;
}

/** Each execution's private directory: beside the workspace, in `.sandbox/`. */
export function privateDirOf(spec: SandboxSpec): string {
  return join(dirname(resolve(spec.workspaceDir)), '.sandbox', containerName(spec));
}

/**
 * A warm container's directories, made with it: its private and killer directories (as an
 * execution's) and the directory bound at /workspace, which becomes the run's workspace at
 * hand-out (see moveWorkspaceInto).
 */
export interface PoolSlot {
  name: string;
  privateDir: string;
  /** The launcher's FIFO in the killer directory (makePrivateDirs), or null. */
  launchFifo: string | null;
  workspace: string;
}

/** Slots live beside the executions' private directories, on the workspaces' filesystem. */
const POOL_SLOT_PREFIX = 'pool-';

export function poolSlotOf(workspaceRoot: string): PoolSlot {
  const name = `ambient-${POOL_SLOT_PREFIX}${randomBytes(8).toString('hex')}`;
  const privateDir = join(resolve(workspaceRoot), '.sandbox', name);
  return { name, privateDir, workspace: `${privateDir}.workspace`, launchFifo: null };
}

/**
 * The container's /etc/hosts, kept in its killer directory and bound read-only: a container
 * without docker's networking gets none from docker (see containerShape), and an image's own is
 * often empty, yet commands resolve `localhost`. The lines docker writes for network none.
 */
export const HOSTS_FILE = 'hosts';
const HOSTS = [
  '127.0.0.1\tlocalhost',
  '::1\tlocalhost ip6-localhost ip6-loopback',
  'fe00::0\tip6-localnet',
  'ff00::0\tip6-mcastprefix',
  'ff02::1\tip6-allnodes',
  'ff02::2\tip6-allrouters',
  '',
].join('\n');

/** A pooled container's workspace slot (nothing else: a handed-out slot is a run's workspace). */
export async function makePrivateDirs(
  privateDir: string,
  user: { uid: number; gid: number } | null,
  withLauncher: boolean,
  /** The launcher is to become the compiled spawner: its events FIFO instead of command slots. */
  withSpawner = false,
): Promise<string | null> {
  await removeDirs(privateDir);
  await mkdir(dirname(privateDir), { recursive: true, mode: 0o711 });
  await mkdir(privateDir, { mode: 0o700 });
  const killerDir = killerDirOf(privateDir);
  await mkdir(killerDir, { mode: 0o700 });
  const launchFifo = withLauncher ? `launch-${randomBytes(8).toString('hex')}` : null;
  const launcherFifos = !launchFifo
    ? []
    : withSpawner
      ? [launchFifo, spawnerEventsFifo(launchFifo)]
      : [launchFifo];
  const fifos = [KILL_FIFO, VERDICT_FIFO, ...launcherFifos].map((f) => join(killerDir, f));
  // With the shell launcher, the first commands' FIFOs too (they need no mkfifo of their own
  // then), in the same mkfifo: one process fewer per container.
  if (launchFifo && !withSpawner) await prepareSlots(killerDir, undefined, fifos);
  else await makeFifos(fifos);
  await writeFile(join(killerDir, HOSTS_FILE), HOSTS, { mode: 0o644 });
  if (user) await chown(privateDir, user.uid, user.gid);
  return launchFifo;
}

export async function removePoolSlot(slot: PoolSlot): Promise<void> {
  await removeDirs(slot.privateDir).catch(() => undefined);
  await rm(slot.workspace, { recursive: true, force: true }).catch(() => undefined);
}

export function isPoolWorkspaceSlot(path: string): boolean {
  return /\/\.sandbox\/ambient-pool-[0-9a-f]{16}\.workspace$/.test(path);
}

/**
 * Makes the run's workspace the directory a warm container has at /workspace, in place: the
 * workspace's entries are moved into the slot, then the slot is renamed over the (now empty)
 * workspace. Both are renames on one filesystem, so nothing is copied and the container sees the
 * files at once; the workspace keeps its host path. Undone when any step fails (a workspace
 * that is a mount point or on another filesystem cannot be moved: the run gets a new container).
 *
 * Plain fs on a tenant's tree, and still no-follow: `workspace` and `slot` are paths Ambient made,
 * and the entries inside are only listed and renamed — rename(2) moves a symlink itself, never what
 * it points at. It runs at hand-out, before any setup command or agent ran in the container.
 */
export async function moveWorkspaceInto(slot: string, workspace: string): Promise<void> {
  const [ws, into, parent] = await Promise.all([
    stat(workspace),
    stat(slot),
    stat(dirname(workspace)),
  ]);
  if (ws.dev !== into.dev || ws.dev !== parent.dev) {
    throw new Error("the workspace is not on the pool's filesystem");
  }
  const names = await readdir(workspace);
  const moved: string[] = [];
  try {
    for (const name of names) {
      await rename(join(workspace, name), join(slot, name));
      moved.push(name);
    }
    await rename(slot, workspace);
  } catch (error) {
    for (const name of moved) {
      await rename(join(slot, name), join(workspace, name)).catch(() => undefined);
    }
    throw error;
  }
}

/** Which directory is bound at a container's /workspace (taken at hand-out, see moveWorkspaceOut). */
export interface DirIdentity {
  dev: number;
  ino: number;
}

export async function dirIdentity(path: string): Promise<DirIdentity> {
  const { dev, ino } = await stat(path);
  return { dev, ino };
}

/**
 * The reverse of moveWorkspaceInto, for a container going back to the pool once none of its
 * processes is left: the run's entries move into a new directory beside the workspace (same mode
 * and owner: returningDirOf), the container's directory (bound at its /workspace, empty now) is renamed back to
 * the slot's path, and the new one to the workspace's. Renames only, undone when a step fails.
 * What this host wrote into the container's directory meanwhile follows (see ContainerReturns,
 * which looks at it once more before the container goes back to the pool).
 * A workspace that is no longer the container's directory (`bound`: replaced or moved meanwhile)
 * is left alone: rejects.
 *
 * Plain fs on a tenant's tree, as moveWorkspaceInto, and still no-follow: the paths stat'ed,
 * made and renamed are Ambient's (the workspace, its `.returning` beside it, the slot), entries
 * inside are only listed and renamed (rename(2) moves a link itself), and every process of the
 * container is gone by then (see ContainerReturns.vacate).
 */
export async function moveWorkspaceOut(
  slot: string,
  workspace: string,
  bound: DirIdentity,
): Promise<void> {
  const ws = await stat(workspace);
  if (ws.dev !== bound.dev || ws.ino !== bound.ino) {
    throw new Error("the workspace is no longer the container's directory");
  }
  const fresh = returningDirOf(workspace);
  await mkdir(fresh);
  const moved: string[] = [];
  let slotRenamed = false;
  try {
    await chmod(fresh, ws.mode & 0o7777);
    await chown(fresh, ws.uid, ws.gid);
    for (const name of await readdir(workspace)) {
      await rename(join(workspace, name), join(fresh, name));
      moved.push(name);
    }
    await rename(workspace, slot);
    slotRenamed = true;
    await rename(fresh, workspace);
  } catch (error) {
    if (slotRenamed) await rename(slot, workspace).catch(() => undefined);
    for (const name of moved) {
      await rename(join(fresh, name), join(workspace, name)).catch(() => undefined);
    }
    await rmdir(fresh).catch(() => undefined);
    throw error;
  }
  // Written by this host between the listing and the rename (the container's processes are gone):
  // the run's too, and the next run must not find them at its /workspace.
  for (const name of await readdir(slot)) await rename(join(slot, name), join(workspace, name));
}

/**
 * Where moveWorkspaceOut gathers the run's entries: a process that died in the middle leaves part
 * of them there (see recoverReturningDir).
 */
export function returningDirOf(workspace: string): string {
  return `${workspace}.returning`;
}

/**
 * Puts back into the workspace what a process that died while moving it out of a container left
 * beside it (at the next execution of the run, before its sandbox opens). A no-op without one.
 * Entries are only listed and renamed, never followed (see moveWorkspaceOut).
 */
export async function recoverReturningDir(workspace: string): Promise<void> {
  const returning = returningDirOf(workspace);
  let names: string[];
  try {
    names = await readdir(returning);
  } catch (_error) {
    return;
  }
  await mkdir(workspace, { recursive: true });
  for (const name of names) await rename(join(returning, name), join(workspace, name));
  await rmdir(returning);
}

/**
 * Empties a returning container's private directory (what Ambient put there for the run: its
 * sockets, the vendor's MCP configuration) and the command directories its run used in its
 * killer's (those made ahead and never used stay for the next run: nothing ever opened them).
 */
export async function emptyPrivateDirs(privateDir: string): Promise<void> {
  const killerDir = killerDirOf(privateDir);
  forgetCancelled(killerDir);
  const spare = new Set(spareSlotNames(killerDir));
  const commands = (await readdir(killerDir)).filter(
    (name) => /^c\d+$/.test(name) && !spare.has(name),
  );
  await Promise.all([
    ...(await readdir(privateDir)).map((name) =>
      rm(join(privateDir, name), { recursive: true, force: true }),
    ),
    ...commands.map((name) => rm(join(killerDir, name), { recursive: true, force: true })),
  ]);
}

export async function removeDirs(privateDir: string): Promise<void> {
  forgetSlots(killerDirOf(privateDir));
  await forgetContainerSpawners(killerDirOf(privateDir));
  await rm(privateDir, { recursive: true, force: true });
  await rm(killerDirOf(privateDir), { recursive: true, force: true });
}
