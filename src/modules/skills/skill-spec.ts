export interface SkillSpec {
  owner: string | null;
  repo: string | null;
  /** A skill name, or a path to its SKILL.md when `isPath`. */
  identifier: string;
  isPath: boolean;
}

/**
 * `skill`, `path/to/SKILL.md`, `repo:skill`, `repo:path`, `owner/repo:skill`, `owner/repo:path`:
 * split at the first `:`, the qualifier at the first `/`; an identifier with more than one path
 * component is a path. Returns a reason string for a spec that cannot be valid.
 */
export function parseSkillSpec(spec: string): SkillSpec | string {
  const colon = spec.indexOf(':');
  const qualifier = colon >= 0 ? spec.slice(0, colon) : '';
  const identifier = (colon >= 0 ? spec.slice(colon + 1) : spec).trim();
  if (!identifier) return 'names no skill';
  if (identifier.startsWith('/')) return 'must not be an absolute path';
  if (identifier.split('/').includes('..')) return 'must not leave the repository';
  let owner: string | null = null;
  let repo: string | null = null;
  if (colon >= 0) {
    const slash = qualifier.indexOf('/');
    owner = slash >= 0 ? qualifier.slice(0, slash) : null;
    repo = slash >= 0 ? qualifier.slice(slash + 1) : qualifier;
    if (!repo || owner === '') return 'has an empty repository qualifier';
  }
  return { owner, repo, identifier, isPath: identifier.split('/').length > 1 };
}
