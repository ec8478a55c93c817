/**
 * AMBIENT_DOCKER_IMAGES: the images environments may name as `docker_image`, an operator's
 * choice. Comma-separated entries, each an image reference (matched exactly) or a prefix ending in
 * `/`, `:` or `*` (`registry.example.com/team/`, `node:`, `ghcr.io/acme/*`); unset, only the
 * default image (AMBIENT_DOCKER_IMAGE). Snapshot images are never nameable, whatever the list.
 */
export const DOCKER_IMAGES_SETTING = 'AMBIENT_DOCKER_IMAGES';

/** The local images holding environment snapshots (see docker-snapshot-image.ts). */
const SNAPSHOT_REPOSITORY = 'ambient-snapshot';

/**
 * An image reference as docker reads it: [host[:port]/]path[:tag][@digest], lower-case path
 * components separated by `.`, `_`, `__` or `-`; nothing else (no spaces, `..`, schemes).
 */
const REFERENCE =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]{1,5})?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;

/** The allowed entries of a setting's value (default: the default image); throws on a bad one. */
export function parseDockerImages(raw: string | undefined, defaultImage: string): string[] {
  const entries = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const reference = entry.replace(/[*]$/, '');
    if (entry === '*') continue;
    if (!/[/:*]$/.test(entry) && !REFERENCE.test(entry)) {
      throw new Error(`"${entry}" is neither an image reference nor a prefix ending in /, : or *`);
    }
    if (reference.includes('*')) throw new Error(`"${entry}": * is allowed only at the end`);
  }
  return entries.length ? entries : [defaultImage];
}

/** The registry a reference pulls from: its first component when that has `.` or `:` or is localhost. */
export function registryHost(reference: string): string | null {
  const slash = reference.indexOf('/');
  if (slash < 0) return null;
  const first = reference.slice(0, slash);
  return /[.:]/.test(first) || first === 'localhost' ? first : null;
}

/** Why an environment may not name `reference` as its image, or null when it may. */
export function dockerImageRefusal(reference: string, allowed: readonly string[]): string | null {
  if (!REFERENCE.test(reference)) return `"${reference}" is not an image reference`;
  if (isSnapshotReference(reference)) {
    return `"${reference}" is an environment snapshot, which only the environment that made it uses`;
  }
  const permitted = allowed.some((entry) =>
    /[/:*]$/.test(entry) ? reference.startsWith(entry.replace(/[*]$/, '')) : reference === entry,
  );
  return permitted
    ? null
    : `"${reference}" is not an image this server allows (${DOCKER_IMAGES_SETTING}: ${allowed.join(', ')})`;
}

/** `ambient-snapshot[:tag]`, under any registry or path (docker.io/library/ambient-snapshot …). */
function isSnapshotReference(reference: string): boolean {
  const path = reference.replace(/@.*$/, '');
  const name = path.slice(path.lastIndexOf('/') + 1).replace(/:.*$/, '');
  return name === SNAPSHOT_REPOSITORY;
}
