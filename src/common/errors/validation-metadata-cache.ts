import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';

type Storage = ReturnType<typeof getMetadataStorage> & { ambientCached?: true };
type Grouped = Record<string, ValidationMetadata[]>;

/**
 * Remembers class-validator's answer to "which constraints apply to this class": it scans the
 * metadata of every decorated class (an `instanceof` per class, for inherited ones) on each
 * object it validates, a tenth of a run creation's validation. The answer only changes when a
 * decorator adds metadata, which empties the cache (classes loaded late, by an extension).
 */
export function cacheValidationMetadata(storage: Storage = getMetadataStorage()): void {
  if (storage.ambientCached) return;
  storage.ambientCached = true;
  const targets = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  let byTarget = new WeakMap<object, Map<string, ValidationMetadata[]>>();
  let grouped = new WeakMap<ValidationMetadata[], Grouped>();

  storage.addValidationMetadata = (metadata: ValidationMetadata): void => {
    byTarget = new WeakMap();
    grouped = new WeakMap();
    add(metadata);
  };
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = `${schema}\u0000${always}\u0000${strictGroups}\u0000${groups?.join('\u0000') ?? ''}`;
    let answers = byTarget.get(target);
    if (!answers) byTarget.set(target, (answers = new Map()));
    let found = answers.get(key);
    if (!found) answers.set(key, (found = targets(target, schema, always, strictGroups, groups)));
    return found;
  };
  // Called with what the above returned: the same array gets the same grouping.
  storage.groupByPropertyName = (metadata: ValidationMetadata[]): Grouped => {
    let found = grouped.get(metadata);
    if (!found) grouped.set(metadata, (found = group(metadata)));
    return found;
  };
}
