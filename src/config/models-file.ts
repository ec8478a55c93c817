import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

/**
 * The model catalogue in effect. `AMBIENT_MODELS_FILE` (or an explicit setting) names it outright;
 * otherwise a git-ignored `<name>.local<ext>` next to the configured catalogue
 * (`config/models.local.yaml`) replaces it when present, so enabling a local model or another
 * default needs no edit to a tracked file.
 */
export function effectiveModelsFile(
  configured: string,
  explicit: boolean,
  exists: (path: string) => boolean = existsSync,
): string {
  if (explicit) return configured;
  const local = localModelsFile(configured);
  return exists(local) ? local : configured;
}

/** `config/models.yaml` → `config/models.local.yaml`. */
export function localModelsFile(configured: string): string {
  const ext = extname(configured);
  return join(dirname(configured), `${basename(configured, ext)}.local${ext}`);
}
