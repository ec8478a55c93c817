import { createHash, timingSafeEqual } from 'node:crypto';
import { newUid } from '../../../../common/ids';
import { workerIdProblem } from '../../../runs';

const CREDENTIAL = /^ambw_([A-Za-z0-9]{12})_[A-Za-z0-9]{32}$/;
/** A credential for a pool of workers names the ids' common prefix followed by `*`. */
const POOL_SUFFIX = '*';

/** A new credential: `ambw_<12-char lookup prefix>_<32-char secret>`. */
export function generateWorkerCredential(): { credential: string; prefix: string } {
  const prefix = newUid(12);
  return { credential: `ambw_${prefix}_${newUid(32)}`, prefix };
}

/** Whether a bearer token is a worker credential (rather than an API key). */
export function isWorkerCredential(token: string): boolean {
  return token.startsWith('ambw_');
}

/** The lookup prefix of a presented credential, or null when it is not one in shape. */
export function credentialPrefixOf(token: string): string | null {
  return CREDENTIAL.exec(token)?.[1] ?? null;
}

export function hashCredential(credential: string): Buffer {
  return createHash('sha256').update(credential, 'utf8').digest();
}

export function hashesEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Why `scope` cannot be a credential's `worker_id` (an id, or `<prefix>*`), or null. */
export function workerScopeProblem(scope: string): string | null {
  const id = scope.endsWith(POOL_SUFFIX) ? scope.slice(0, -POOL_SUFFIX.length) : scope;
  if (id === '') return 'a pool needs a prefix before "*" (e.g. "ci-*")';
  const problem = workerIdProblem(id);
  return problem && `${problem} (a pool: the prefix followed by "*")`;
}

/** Whether a worker id falls within a credential's `worker_id` scope. */
export function scopeCovers(scope: string, workerId: string): boolean {
  return scope.endsWith(POOL_SUFFIX)
    ? workerId.startsWith(scope.slice(0, -POOL_SUFFIX.length))
    : workerId === scope;
}
