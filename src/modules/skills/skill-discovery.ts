import { Logger } from '@nestjs/common';
import { Dirent } from 'node:fs';
import {
  listTenantDir,
  readTenantFile,
  TenantFileError,
} from '../../common/tenant-files/tenant-files';
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

/**
 * Directories never searched for skill prefixes: dependencies and build output that hold other
 * projects' files. Hidden directories (`.git`, `.venv`, `.next` …) are skipped as prefixes too;
 * the provider directories are looked up by name, not walked into.
 */
export const VENDORED_DIRS = new Set([
  'node_modules',
  'bower_components',
  'jspm_packages',
  'vendor',
  'third_party',
  'third-party',
  'Pods',
  'Carthage',
  'venv',
  '__pycache__',
  'site-packages',
  'target',
  'dist',
  'build',
  'out',
]);

/** How far below the repository root a prefix may be, and how many directories one discovery reads. */
export const DISCOVERY_LIMITS = { maxPrefixDepth: 6, maxDirectories: 5_000 };
/** A SKILL.md larger than this is reported, not read. */
export const MAX_SKILL_BYTES = 1024 * 1024;

export interface FoundSkill {
  /** Path of the SKILL.md inside the repository. */
  path: string;
  skill: ParsedSkill | null;
  /** Why the file is not a usable skill (then `skill` is null). */
  error: string | null;
}

const logger = new Logger('SkillDiscovery');
/** `.agents`, `.warp` …: a directory holding none of them has no skills of its own. */
const PROVIDER_ROOTS = new Set(SKILL_DIRS.map((dir) => dir.split('/')[0]));

/**
 * Every `<prefix>/<provider dir>/<name>/SKILL.md` of the repository, where the prefix is the root
 * or any directory below it (monorepos): prefixes breadth first (so shallower first) and by name,
 * then providers in precedence order, then skill names. The same skill directory name with the
 * same content under several providers of one prefix is reported once, for the first provider.
 * The walk stops at `limits` (a huge repository must not stall a request); what was found by
 * then is returned.
 */
export async function discoverSkills(
  repoDir: string,
  limits = DISCOVERY_LIMITS,
): Promise<FoundSkill[]> {
  const found: FoundSkill[] = [];
  let budget = limits.maxDirectories;
  let level: string[] = [''];
  for (let depth = 0; level.length && depth <= limits.maxPrefixDepth; depth++) {
    const next: string[] = [];
    for (const prefix of level) {
      if (budget-- <= 0) {
        logger.warn(`${repoDir}: stopped after ${limits.maxDirectories} directories`);
        return found;
      }
      const entries = await listDir(repoDir, prefix);
      if (entries.some((e) => PROVIDER_ROOTS.has(e.name))) {
        found.push(...(await skillsAt(repoDir, prefix)));
      }
      for (const entry of entries) {
        if (!entry.isDirectory() || entry.name.startsWith('.') || VENDORED_DIRS.has(entry.name)) {
          continue;
        }
        next.push(prefix ? `${prefix}/${entry.name}` : entry.name);
      }
    }
    level = next;
  }
  return found;
}

/** The skills of one prefix, providers in precedence order, duplicates dropped. */
async function skillsAt(repoDir: string, prefix: string): Promise<FoundSkill[]> {
  const found: FoundSkill[] = [];
  const seen = new Set<string>();
  for (const providerDir of SKILL_DIRS) {
    const base = prefix ? `${prefix}/${providerDir}` : providerDir;
    for (const entry of await listDir(repoDir, base)) {
      if (!entry.isDirectory()) continue;
      const path = `${base}/${entry.name}/SKILL.md`;
      const read = await readSkillText(repoDir, path);
      if ('missing' in read) continue;
      if ('text' in read) {
        const key = `${entry.name}\0${read.text}`;
        if (seen.has(key)) continue;
        seen.add(key);
      }
      found.push(toFoundSkill(path, read));
    }
  }
  return found;
}

/**
 * A directory's entries sorted by name; none when it does not exist, cannot be read, or is (or
 * is reached through) a link out of the repository.
 */
async function listDir(repoDir: string, path: string): Promise<Dirent[]> {
  const entries = await listTenantDir(repository(repoDir), path).catch(() => []);
  return entries.sort((a, b) => a.name.localeCompare(b.name));
}

type SkillText = { text: string } | { error: string } | { missing: true };

/** A symlink must not make a server file (e.g. /proc/self/environ) a skill anyone can read. */
async function readSkillText(repoDir: string, path: string): Promise<SkillText> {
  try {
    return { text: (await readTenantFile(repository(repoDir), path, MAX_SKILL_BYTES)).toString() };
  } catch (err) {
    if (!(err instanceof TenantFileError)) return { error: (err as Error).message };
    return err.problem === 'missing' ? { missing: true } : { error: err.message };
  }
}

function repository(root: string) {
  return { root, label: 'repository' };
}

function toFoundSkill(path: string, read: { text: string } | { error: string }): FoundSkill {
  if ('error' in read) return { path, skill: null, error: read.error };
  const parts = path.split('/');
  const dirName = parts.length > 1 ? parts[parts.length - 2] : 'skill';
  try {
    return { path, skill: parseSkillFile(read.text, dirName), error: null };
  } catch (err) {
    return { path, skill: null, error: (err as Error).message };
  }
}

/** The skill at `path` (a SKILL.md inside the repository), or why it is not one. */
export async function readSkill(repoDir: string, path: string): Promise<FoundSkill> {
  const read = await readSkillText(repoDir, path);
  if ('missing' in read) return { path, skill: null, error: `${path} does not exist` };
  return toFoundSkill(path, read);
}

/** The directory a skill was found below (`''` for the repository root). */
export function skillPrefix(path: string): string {
  return path.split('/').slice(0, -4).join('/');
}

/**
 * Of the usable skills one name matched in a repository, the one a run gets: those at the
 * shallowest prefix win (the repository root before `packages/web`), and there the provider
 * precedence; two prefixes equally deep are ambiguous (the caller asks for a path).
 */
export function chooseByPrefix(matches: FoundSkill[]): FoundSkill | { ambiguous: string[] } {
  const depth = (f: FoundSkill) =>
    skillPrefix(f.path) ? skillPrefix(f.path).split('/').length : 0;
  const shallowest = Math.min(...matches.map(depth));
  const winners = matches.filter((f) => depth(f) === shallowest);
  const prefixes = new Set(winners.map((f) => skillPrefix(f.path)));
  return prefixes.size > 1 ? { ambiguous: winners.map((f) => f.path) } : winners[0];
}
