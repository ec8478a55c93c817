import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { newUid } from '../../../common/ids';

const run = promisify(execFile);

/** Where a snapshot's files and its record live inside its directory. */
const FILES = 'workspace';
const RECORD = 'snapshot.json';
/** Snapshots being written or deleted: never read; left over by a crash, swept. */
const TEMP_PREFIX = '.tmp-';
/** A temporary directory this old is a crashed process's (a copy takes seconds, not an hour). */
const TEMP_GRACE_MS = 60 * 60_000;
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const KEY = /^[0-9a-f]{64}$/;

export interface SnapshotBounds {
  /** Total size of one team's snapshots; the least recently used go first. */
  maxBytesPerTeam: number;
  maxAgeMs: number;
}

interface SnapshotRecord {
  /** The workspace copy and, with one, the image's own layer. */
  size_bytes: number;
  created_at: string;
  /** The image holding the sandbox's own filesystem (docker), when the snapshot has one. */
  image?: string;
}

/** A snapshot's image (docker's `docker commit` of the prepared container). */
export interface SnapshotImage {
  tag: string;
  sizeBytes: number;
}

interface StoredSnapshot {
  dir: string;
  environmentId: string;
  sizeBytes: number;
  createdAt: number;
  lastUsedAt: number;
}

/**
 * Prepared workspaces kept on this worker's disk, at `<root>/<team>/<environment>/<key>/`: the
 * workspace's files and a record (size, creation time; the record's mtime is the last use). A
 * snapshot appears by rename of a complete temporary copy and disappears by rename aside before
 * it is deleted, so a reader never sees half of one; the team is part of the path and of the key,
 * so a run is only ever restored from its own team's snapshots.
 *
 * Why `cp` and `du` run outside the Sandbox boundary: they are the service's own tools, and no
 * agent-controlled code runs. Their arguments are fixed and both paths are directories Ambient
 * made; the tenant's files are only copied and measured, never interpreted or executed, and
 * neither tool follows a link the tenant may have planted. Running them inside the run's sandbox
 * would give it the snapshot store, which holds every environment's snapshots of the team.
 */
export class SnapshotStore {
  constructor(
    readonly root: string,
    private readonly bounds: SnapshotBounds,
    /** Removes a discarded snapshot's image (never throws; one in use goes at a later sweep). */
    private readonly removeImage: (tag: string) => Promise<void> = async () => undefined,
  ) {}

  /** The image of the key's snapshot: null without a (fresh) snapshot or without an image. */
  async imageOf(teamId: string, environmentId: string, key: string): Promise<string | null> {
    const dir = this.dirOf(teamId, environmentId, key);
    const record = dir ? await readRecord(dir) : null;
    if (!record?.image) return null;
    return Date.now() - Date.parse(record.created_at) > this.bounds.maxAgeMs ? null : record.image;
  }

  /** Whether the key's snapshot is on the disk (whatever its age). */
  async has(teamId: string, environmentId: string, key: string): Promise<boolean> {
    const dir = this.dirOf(teamId, environmentId, key);
    return Boolean(dir && (await readRecord(dir)));
  }

  /**
   * Copies the snapshot into `workspaceDir` (an empty directory); false when there is none (or it
   * is too old, or the copy failed — then `workspaceDir` is emptied again).
   */
  async restore(teamId: string, environmentId: string, key: string, workspaceDir: string) {
    const dir = this.dirOf(teamId, environmentId, key);
    if (!dir) return false;
    const record = await readRecord(dir);
    if (!record) return false;
    if (Date.now() - Date.parse(record.created_at) > this.bounds.maxAgeMs) {
      await this.discard(dir);
      return false;
    }
    try {
      await copyTree(join(dir, FILES), workspaceDir);
    } catch {
      // Deleted under us by another process's bounds, or the disk is full: set up as usual.
      await emptyDir(workspaceDir);
      return false;
    }
    const now = new Date();
    await utimes(join(dir, RECORD), now, now).catch(() => undefined);
    return true;
  }

  /**
   * Keeps a copy of `workspaceDir` as the environment's snapshot for `key`, replacing the
   * environment's other snapshots of this team (their key no longer matches), then holds the
   * team to its size bound. With `image`, the snapshot owns it: its size counts, and it is
   * removed with the snapshot (also when the snapshot is not kept for its size).
   */
  async keep(
    teamId: string,
    environmentId: string,
    key: string,
    workspaceDir: string,
    image?: SnapshotImage,
  ) {
    const dir = this.dirOf(teamId, environmentId, key);
    if (!dir) {
      if (image) await this.removeImage(image.tag);
      return;
    }
    const parent = join(dir, '..');
    await mkdir(parent, { recursive: true });
    const temp = join(parent, `${TEMP_PREFIX}${newUid()}`);
    try {
      await mkdir(join(temp, FILES), { recursive: true });
      await copyTree(workspaceDir, join(temp, FILES));
      const sizeBytes = (await diskUsage(temp)) + (image?.sizeBytes ?? 0);
      const record: SnapshotRecord = {
        size_bytes: sizeBytes,
        created_at: new Date().toISOString(),
        ...(image ? { image: image.tag } : {}),
      };
      await writeFile(join(temp, RECORD), JSON.stringify(record));
      if (sizeBytes > this.bounds.maxBytesPerTeam) {
        if (image) await this.removeImage(image.tag);
        return;
      }
      // The same key's image has the same tag: it is the one just made, not the old one's.
      await this.discard(dir, image?.tag);
      await rename(temp, dir);
    } catch (err) {
      if (image) await this.removeImage(image.tag);
      throw err;
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
    for (const entry of await readdir(parent)) {
      if (entry !== key && KEY.test(entry)) await this.discard(join(parent, entry));
    }
    await this.boundTeam(teamId);
  }

  /**
   * Removes temporary directories a crash left, snapshots past their age, those of environments
   * `environments` says are gone or changed since (when given: environment id → last update, ms)
   * and, per team, the least recently used beyond the size bound. Returns how many went.
   */
  async sweep(
    now = Date.now(),
    environments?: (ids: string[]) => Promise<Map<string, number>>,
  ): Promise<number> {
    let removed = 0;
    const updated = environments ? await environments(await this.environmentIds()) : null;
    for (const team of await entries(this.root)) {
      const teamDir = join(this.root, team);
      for (const environment of await entries(teamDir)) {
        const envDir = join(teamDir, environment);
        for (const entry of await entries(envDir)) {
          const path = join(envDir, entry);
          if (entry.startsWith(TEMP_PREFIX)) {
            const since = await stat(path).then(
              (s) => s.mtimeMs,
              () => now,
            );
            if (now - since > TEMP_GRACE_MS) await rm(path, { recursive: true, force: true });
          }
        }
      }
      if (!SAFE_ID.test(team)) continue;
      for (const snapshot of await this.snapshotsOf(team)) {
        const changedAt = updated ? (updated.get(snapshot.environmentId) ?? Infinity) : 0;
        if (now - snapshot.createdAt > this.bounds.maxAgeMs || changedAt > snapshot.createdAt) {
          await this.discard(snapshot.dir);
          removed++;
        }
      }
      removed += await this.boundTeam(team);
    }
    return removed;
  }

  private async boundTeam(teamId: string): Promise<number> {
    const snapshots = await this.snapshotsOf(teamId);
    snapshots.sort((a, b) => b.lastUsedAt - a.lastUsedAt);
    let total = 0;
    let removed = 0;
    for (const snapshot of snapshots) {
      total += snapshot.sizeBytes;
      if (total > this.bounds.maxBytesPerTeam) {
        await this.discard(snapshot.dir);
        removed++;
      }
    }
    return removed;
  }

  private async snapshotsOf(teamId: string): Promise<StoredSnapshot[]> {
    const teamDir = join(this.root, teamId);
    const found: StoredSnapshot[] = [];
    for (const environment of await entries(teamDir)) {
      for (const key of await entries(join(teamDir, environment))) {
        if (!KEY.test(key)) continue;
        const dir = join(teamDir, environment, key);
        const record = await readRecord(dir);
        const used = await stat(join(dir, RECORD)).then(
          (s) => s.mtimeMs,
          () => 0,
        );
        if (!record) continue;
        found.push({
          dir,
          environmentId: environment,
          sizeBytes: record.size_bytes,
          createdAt: Date.parse(record.created_at),
          lastUsedAt: used,
        });
      }
    }
    return found;
  }

  private async environmentIds(): Promise<string[]> {
    const ids = new Set<string>();
    for (const team of await entries(this.root)) {
      for (const environment of await entries(join(this.root, team))) ids.add(environment);
    }
    return [...ids].filter((id) => SAFE_ID.test(id));
  }

  private dirOf(teamId: string, environmentId: string, key: string): string | null {
    if (!SAFE_ID.test(teamId) || !SAFE_ID.test(environmentId) || !KEY.test(key)) return null;
    return join(this.root, teamId, environmentId, key);
  }

  /** Renamed aside first, so no reader finds a half-deleted snapshot; its image goes with it. */
  private async discard(dir: string, keepImage?: string): Promise<void> {
    const aside = join(dir, '..', `${TEMP_PREFIX}${newUid()}`);
    try {
      await rename(dir, aside);
    } catch {
      return; // gone already
    }
    const record = await readRecord(aside);
    await rm(aside, { recursive: true, force: true });
    if (record?.image && record.image !== keepImage) await this.removeImage(record.image);
  }
}

/** `cp -a` (reflinks where the filesystem has them): links stay links, never followed. */
async function copyTree(from: string, to: string): Promise<void> {
  // On the host, not in a sandbox: both ends are directories Ambient made, and a tenant's tree is
  // only copied, never read or run. `cp -a` copies links as links (it follows none).
  await run('cp', ['-a', '--reflink=auto', '--', `${from}/.`, `${to}/`], {
    maxBuffer: 1024 * 1024,
  });
}

async function diskUsage(dir: string): Promise<number> {
  // On the host, like copyTree: `du` counts links as links, without following them.
  const { stdout } = await run('du', ['-sb', '--', dir]);
  return Number(stdout.split('\t')[0]) || 0;
}

async function emptyDir(dir: string): Promise<void> {
  for (const entry of await entries(dir))
    await rm(join(dir, entry), { recursive: true, force: true });
}

async function readRecord(dir: string): Promise<SnapshotRecord | null> {
  try {
    const record = JSON.parse(await readFile(join(dir, RECORD), 'utf8')) as SnapshotRecord;
    return typeof record.size_bytes === 'number' &&
      typeof record.created_at === 'string' &&
      (record.image === undefined || typeof record.image === 'string')
      ? record
      : null;
  } catch {
    return null;
  }
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch {
    return [];
  }
}
