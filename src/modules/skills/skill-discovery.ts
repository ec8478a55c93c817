import { existsSync } from 'node:fs';
import { readdir, readFile, realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { parseSkillFile, ParsedSkill } from './skill-file';

/** Provider directories in precedence order (Warp's skill_provider.rs). */
export const SKILL_DIRS = [
  '.agents/skills',
  '.warp/skills',
  '.claude/skills',
  '.codex/skills',
  '.cursor/skills',
  '.gemini/skills',
  '.copilot/skills',
  '.factory/skills',
  '.github/skills',
  '.opencode/skills',
];

export interface FoundSkill {
  /** Path of the SKILL.md inside the repository. */
  path: string;
  skill: ParsedSkill | null;
  /** Why the file is not a usable skill (then `skill` is null). */
  error: string | null;
}

/** Every `<provider dir>/<name>/SKILL.md` at the repository root, in precedence order. */
export async function discoverSkills(repoDir: string): Promise<FoundSkill[]> {
  const found: FoundSkill[] = [];
  for (const providerDir of SKILL_DIRS) {
    const base = join(repoDir, providerDir);
    if (!existsSync(base)) continue;
    const entries = await readdir(base, { withFileTypes: true });
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = `${providerDir}/${entry.name}/SKILL.md`;
      if (!entry.isDirectory() || !existsSync(join(repoDir, path))) continue;
      found.push(await readSkill(repoDir, path));
    }
  }
  return found;
}

export async function readSkill(repoDir: string, path: string): Promise<FoundSkill> {
  const parts = path.split('/');
  const dirName = parts.length > 1 ? parts[parts.length - 2] : 'skill';
  try {
    // A symlink must not make a server file (e.g. /proc/self/environ) a skill anyone can read.
    const [root, file] = await Promise.all([realpath(repoDir), realpath(join(repoDir, path))]);
    if (!file.startsWith(`${root}${sep}`)) throw new Error(`${path} points outside the repository`);
    const text = await readFile(file, 'utf8');
    return { path, skill: parseSkillFile(text, dirName), error: null };
  } catch (err) {
    const message =
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? `${path} does not exist`
        : (err as Error).message;
    return { path, skill: null, error: message };
  }
}
