import { Logger } from '@nestjs/common';
import { spawn } from 'node:child_process';
import { SandboxSpawner } from '../../sandbox-spawner';
import type { SandboxProcess } from '../../sandbox.types';

const logger = new Logger('Sandbox');

/**
 * The exit status of the forwarder (`-n`) and of the spawner (`--confine`) when the host refuses
 * them the namespaces or a step of the sandbox's making (native/forwarder.c, native/confine.c).
 */
export const CANNOT_CONFINE = 78;
/**
 * The spawner's exit status for options it does not know or that lack what it needs (usage): also
 * its answer to a bare `--confine`, which tells a spawner that knows it from one built before.
 */
const UNKNOWN_OPTION = 64;

/** How long an execution's spawn helper may take to say it is ready (a loaded host's bwrap start). */
const SPAWNER_START_MS = 30_000;

/**
 * What makes a bubblewrap execution's sandbox around its spawn helper, from bwrap's arguments: the
 * compiled spawner itself (`--confine`, native/confine.c: bwrap's namespaces and mounts from one
 * static exec, without bwrap's start), else bwrap. A sandbox the spawner did not make is made by
 * bwrap: that one alone after a failure of its own (71), every later one too once bwrap could
 * after the host refused the spawner a step (78) or an option was unknown to it (64). A spawner
 * built before `--confine` is found out by one probe and never asked.
 */
export class SandboxMaker {
  /** Whether `confiner` knows `--confine`, asked once (see knowsConfine). */
  private confineKnown: Promise<boolean> | null = null;

  /** `confiner`: the compiled spawner, null for bwrap always (AMBIENT_BUBBLEWRAP_CONFINE=false). */
  constructor(
    private readonly bwrap: string,
    private confiner: string | null,
  ) {}

  /**
   * The execution's spawn helper as the pid 1 of a sandbox made with bwrap's arguments `args`
   * (ending with the helper's command), started by `launchWith` (`confine`: the command is the
   * spawner's `--confine`, which the host's compiled spawn helper may make in its own child);
   * null when it did not start, and the execution's commands start a bwrap each.
   */
  async startHelper(
    args: string[],
    launchWith: (command: string[], confine: boolean) => SandboxProcess,
  ): Promise<SandboxSpawner | null> {
    const confiner =
      this.confiner && (await this.knowsConfine(this.confiner)) ? this.confiner : null;
    const confined = confiner
      ? await SandboxSpawner.start(
          launchWith([confiner, '--confine', ...args], true),
          SPAWNER_START_MS,
        )
      : null;
    if (confined instanceof SandboxSpawner) return confined;
    const started = await SandboxSpawner.start(
      launchWith([this.bwrap, ...args], false),
      SPAWNER_START_MS,
    );
    if (started instanceof SandboxSpawner) {
      // Not for a helper that failed otherwise, or was killed: the next sandbox asks it again.
      const refused = confined?.code === CANNOT_CONFINE || confined?.code === UNKNOWN_OPTION;
      if (confined && refused && this.confiner) {
        this.confiner = null;
        logger.warn(
          `the spawner cannot make sandboxes on this host (${confined.said || 'no word from it'}): bwrap makes them instead (its start costs a few ms of CPU more per execution)`,
        );
      }
      return started;
    }
    logger.warn(
      `a sandbox's process spawner did not start (${started.said || 'no word from it'}): this execution's commands each start a bwrap instead`,
    );
    return null;
  }

  /**
   * Whether `spawner` knows `--confine`, asked once: given nothing else, it says what it needs and
   * exits 64 at once. A spawner built before it (its rebuild failed, leaving it) would take the
   * option for its host mode and wait for requests: every sandbox would wait 30 s for it; one
   * built without it (confine.c did not compile there) exits 69. Not known: bwrap makes the
   * sandboxes, and the log says why once.
   */
  private knowsConfine(spawner: string): Promise<boolean> {
    this.confineKnown ??= new Promise<boolean>((resolve) => {
      const probe = spawn(spawner, ['--confine'], { stdio: 'ignore', timeout: 10_000 });
      probe.on('error', () => resolve(false));
      probe.on('exit', (code) => resolve(code === UNKNOWN_OPTION));
    }).then((known) => {
      if (!known) {
        this.confiner = null;
        logger.warn(
          `${spawner} does not make sandboxes itself (built before --confine, or without it where native/confine.c did not compile: npm run build says which): bwrap makes them (a few ms of CPU more per execution)`,
        );
      }
      return known;
    });
    return this.confineKnown;
  }
}
