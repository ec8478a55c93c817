import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { settlesWithin } from '../../../../../common/time';
import { SANDBOX_PATH, type SandboxSpec } from '../../sandbox.types';
import { layerUnchanged } from './container-layer';
import { launch, launcherListens } from './container-launcher';
import {
  askKiller,
  KILLER_DIR,
  killAllLine,
  killerDirOf,
  type KillerCheck,
  launchLine,
  tellKiller,
} from './container-killer';
import { forwarderInto, launcherStarted } from './container-plumbing';
import { containerSpawner } from './container-spawner';
import type { DockerHost } from './docker-host';
import { DirResetter, dirResetPath } from './dir-resetter';
import type { NetnsForwarder } from './netns-bridge';
import type { StartedContainer } from './docker-sandbox-instance';
import { emptyPrivateDirs, moveWorkspaceOut } from './sandbox-dirs';
import type { HandedOut, WarmContainer } from './warm-containers';

/**
 * What became of a pooled container at its sandbox's close (ambient_sandbox_pool_returns_total):
 * `reused` back in the pool; else removed because the pool held its most already (`pool_full`),
 * its processes did not all end
 * (`processes_left`), its writable layer changed (`root_changed`), it hit its memory or process
 * limit (`limit_hit`), /tmp, /dev/shm, /dev/mqueue or SysV IPC could not be emptied
 * (`leftovers`), the workspace could not be moved out of it (`workspace`), its killer did not
 * answer in time (`no_answer`: a loaded host, or a container of an older version), its launcher did
 * not start again (`launcher`), or anything else failed (`failed`).
 */
export type ReturnOutcome =
  | 'reused'
  | 'pool_full'
  | 'processes_left'
  | 'root_changed'
  | 'limit_hit'
  | 'leftovers'
  | 'workspace'
  | 'no_answer'
  | 'launcher'
  | 'failed';

/**
 * How long the container's processes may take to end after the killer's `kill -9 -1`, and the
 * killer to answer one `check`: milliseconds on a quiet host, seconds on one loaded by a burst
 * (the sandbox's close waits; a container that misses them is removed, which costs the daemons more).
 */
const SETTLE_MS = 3000;
const ANSWER_MS = 3000;
/** How long the launcher started anew may take to read its FIFO (in the background). */
const LAUNCHER_START_MS = 10_000;
/** How long the egress forwarder may take to end, and the emptying command to be acknowledged. */
const STEP_MS = 5000;
/** How long emptying /tmp and the rest as the sandbox user may take. */
const EMPTYING_MS = 5000;
/** docker-init and the killer; the launcher once started anew. */
const OWN_PROCESSES = 2;

/**
 * Empties, as the sandbox user, what a run may leave outside the workspace and the root layer:
 * /tmp, /dev/shm and /dev/mqueue (directories it made unreadable first made readable, one at a time
 * and top-down; nothing followed through a link) and its SysV IPC objects.
 */
const EMPTYING = [
  'for d in /tmp /dev/shm /dev/mqueue; do',
  '  [ -d "$d" ] || continue',
  '  find "$d" -mindepth 1 -type d ! -perm -u=rwx -exec chmod u+rwx {} \\; 2>/dev/null',
  '  find "$d" -mindepth 1 -delete 2>/dev/null',
  'done',
  'ipcrm --all 2>/dev/null',
  'exit 0',
].join('\n');

function delay<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms).unref());
}

/** The container vacated by its run (see vacate), with what it still held. */
export interface Vacated {
  check: KillerCheck;
}

/**
 * The return of a closed sandbox's pooled container to the pool, instead of its removal: a
 * container costs the Docker daemons far more CPU to make and remove than to empty. In two steps.
 * `vacate`, which the sandbox's close waits for: every process of the container killed and seen
 * gone (by its killer, which counts its pid namespace's /proc), no limit hit, its writable layer as
 * it started (see container-layer.ts), and the run's workspace moved out of it. `refit`, in the
 * background: the private directory and the killer's used command directories emptied, the
 * launcher started anew, /tmp and the rest emptied as the sandbox user when the run left anything
 * there (and checked empty), the API forwarder kept (its socket gone with the run's bridge; a new
 * one if it ended), its pool name back. Whatever fails, the container is removed as any
 * other; docs/environments-and-sandboxes.md says what a reused container keeps (nothing of a run).
 */
export class ContainerReturns {
  /** Resets each returned container's /workspace directory (null without the compiled reset). */
  private readonly resetter: DirResetter | null;

  constructor(private readonly host: DockerHost) {
    const program = dirResetPath();
    this.resetter = program ? new DirResetter(program, STEP_MS) : null;
  }

  /** Ends what the returns keep running (a worker's shutdown, once returns are drained). */
  stop(): void {
    this.resetter?.stop();
  }

  /** Whether the sandbox's container may go back to the pool at all. */
  static eligible(started: StartedContainer, warm: HandedOut, spec: SandboxSpec): boolean {
    return started.container.id === warm.container.id && ContainerReturns.returnable(warm, spec);
  }

  /** What eligible asks of the warm container and the run, known already at the hand-out. */
  static returnable(warm: WarmContainer, spec: SandboxSpec): boolean {
    return (
      warm.init !== null &&
      warm.layer !== null &&
      warm.slot.launchFifo !== null &&
      // A snapshot's image may be removed once a newer snapshot replaces it.
      !spec.snapshotImage &&
      dirResetPath() !== null
    );
  }

  /** The first step (see the class); an outcome when the container must be removed instead. */
  async vacate(warm: HandedOut, workspace: string): Promise<Vacated | ReturnOutcome> {
    const { privateDir } = warm.slot;
    if (!(await tellKiller(privateDir, killAllLine(warm.container.id)))) return 'failed';
    const check = await this.settled(warm, OWN_PROCESSES);
    if (!check) return 'no_answer';
    if (check.processes > OWN_PROCESSES) return 'processes_left';
    if (check.limitHits > 0) return 'limit_hit';
    if (!(await this.layerUnchanged(warm))) return 'root_changed';
    try {
      await moveWorkspaceOut(warm.slot.workspace, workspace, warm.bound);
    } catch (_error) {
      return 'workspace';
    }
    return { check };
  }

  /** The second step (see the class): the container ready for the pool, or why it is not. */
  async refit(
    started: StartedContainer,
    warm: HandedOut,
    { check }: Vacated,
  ): Promise<WarmContainer | ReturnOutcome> {
    const { slot, container } = warm;
    const user = this.host.user;
    if (!user || !this.resetter) return 'failed';
    const fifo = slot.launchFifo!;
    const killerDir = killerDirOf(slot.privateDir);
    // The API forwarder the run's bridge used stays (its socket is gone: connections are refused
    // until the next run's bridge listens); the egress proxy's, stopped at the close, must have
    // freed its port for the next run's.
    const kept = started.bridge?.netnsForwarder ?? null;
    const proxyEnded = started.proxyForwarder?.ended ?? Promise.resolve();
    if (!(await settlesWithin(proxyEnded, STEP_MS))) return 'failed';
    await emptyPrivateDirs(slot.privateDir);
    if (!(await this.resetter.reset(slot.workspace, 0o755, user))) return 'workspace';
    if (!(await tellKiller(slot.privateDir, launchLine(container.id, fifo)))) return 'failed';
    await launcherStarted(killerDir, fifo, LAUNCHER_START_MS);
    if (!(await launcherListens(join(killerDir, fifo)))) return 'launcher';
    if (check.leftovers > 0 && !(await this.empty(warm))) return 'leftovers';
    // The last look, whatever the first said: nothing left or started since (a command the closing
    // sandbox was still starting), the layer as it started, nothing in the workspace's directory.
    const last = await this.settled(warm, OWN_PROCESSES + 1);
    if (!last) return 'no_answer';
    if (last.processes > OWN_PROCESSES + 1) return 'processes_left';
    if (last.leftovers > 0) return 'leftovers';
    if (!(await this.layerUnchanged(warm))) return 'root_changed';
    if ((await readdir(slot.workspace)).length > 0) return 'workspace';
    const forwarder = kept?.running ? kept : await this.newForwarder(warm, kept);
    try {
      await container.rename({ name: slot.name });
    } catch (error) {
      // The run's own is stopped by the caller with the container.
      if (forwarder !== kept) forwarder?.stop();
      throw error;
    }
    return {
      container,
      pid: warm.pid,
      init: warm.init,
      limits: warm.runLimits,
      slot,
      forwarder,
      layer: warm.layer,
    };
  }

  /** A new API forwarder, once the one the run had (if any) has freed its port. */
  private async newForwarder(
    warm: HandedOut,
    old: NetnsForwarder | null,
  ): Promise<NetnsForwarder | null> {
    for (const forwarder of [old, warm.forwarder]) forwarder?.stop();
    await Promise.all([old?.ended, warm.forwarder?.ended]);
    return forwarderInto(warm.pid, warm.slot.privateDir);
  }

  private async layerUnchanged(warm: HandedOut): Promise<boolean> {
    return warm.layer !== null && layerUnchanged(warm.layer.upperDir, warm.layer.snapshot);
  }

  /**
   * Asks the killer until no more than `processes` are left (a killed process is gone once
   * docker-init reaped it) or SETTLE_MS passed; its last answer, null when it gave none.
   */
  private async settled(warm: HandedOut, processes: number): Promise<KillerCheck | null> {
    const deadline = Date.now() + SETTLE_MS;
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      const check = await askKiller(warm.slot.privateDir, warm.container.id, ANSWER_MS);
      if (!check || check.processes <= processes || Date.now() >= deadline) return check;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * Runs EMPTYING as the sandbox user through the container's spawner (the channel stays for the
   * container's next run) or its shell launcher; true once it ended.
   */
  private async empty(warm: HandedOut): Promise<boolean> {
    const user = this.host.user;
    if (!user) return false;
    if (this.host.withSpawner) {
      const spawner = await containerSpawner(
        killerDirOf(warm.slot.privateDir),
        warm.slot.launchFifo!,
        STEP_MS,
      );
      if (!spawner) return false;
      const command = spawner.spawn('/bin/sh', ['-c', EMPTYING, 'ambient-emptying'], {
        env: { PATH: SANDBOX_PATH },
      });
      command.stdout.resume();
      command.stderr.resume();
      const ended = await settlesWithin(command.exited, EMPTYING_MS);
      if (!ended) command.kill();
      return ended && (await command.exited).code === 0;
    }
    const command = await launch(
      killerDirOf(warm.slot.privateDir),
      KILLER_DIR,
      warm.slot.launchFifo!,
      {
        wrapper: EMPTYING,
        args: ['ambient-emptying'],
        uid: user.uid,
        gid: user.gid,
        helperArgs: ['--', '/bin/sh', '-c', EMPTYING, 'ambient-emptying'],
      },
    );
    if (!command) return false;
    try {
      const acknowledged = await Promise.race([command.acknowledged, delay(STEP_MS, false)]);
      if (!acknowledged) return false;
      await command.proceed();
      command.stdout.resume();
      command.stderr.resume();
      return await settlesWithin(command.status, EMPTYING_MS);
    } finally {
      await command.dispose();
    }
  }
}
