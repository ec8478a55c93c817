import { readdir } from 'node:fs/promises';
import { cgroupVersion, groupDirs, removeGroup, sandboxGroupsDir } from './cgroup-limits';
import { cgroupOwnerIsAlive, cgroupOwnerOf } from './cgroup-owner';

/**
 * Removes the sandbox cgroups whose maker has died (a worker killed before it closed its
 * sandboxes), killing what still runs in them; returns how many. A group's name carries its
 * maker's pid and start time, so this judges by the host's processes, not by a database: the
 * workers of every deployment on this host share the `ambient` group, and none may remove
 * another's live sandbox.
 */
export async function sweepOrphanCgroups(): Promise<number> {
  const version = await cgroupVersion();
  if (!version) return 0;
  const entries = await readdir(sandboxGroupsDir(version), { withFileTypes: true }).catch(() => []);
  let removed = 0;
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const owner = cgroupOwnerOf(entry.name);
    if (!owner || cgroupOwnerIsAlive(owner)) continue;
    if (await removeGroup(Object.values(groupDirs(version, entry.name)))) removed += 1;
  }
  return removed;
}
