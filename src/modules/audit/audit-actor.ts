import type { Principal } from '../../common/auth/principal';
import type { AuditActorType } from './audit-vocabulary';

/** Who did what an audit event records. */
export interface AuditActor {
  type: AuditActorType;
  id: string;
  name: string | null;
  role: string | null;
  /** For an API key: the person or agent identity it belongs to. */
  onBehalfOf?: AuditPrincipal | null;
}

/** A person or agent identity an actor acts for. */
export interface AuditPrincipal {
  type: Extract<AuditActorType, 'user' | 'agent'>;
  id: string;
  name: string | null;
}

/** What an event is about: `{type: 'run', id: <run id>}`. */
export interface AuditTarget {
  type: string;
  id: string;
}

/** Ambient itself, or its operator at the command line (e.g. `api-keys create`). */
export const SYSTEM_ACTOR: AuditActor = {
  type: 'system',
  id: 'system',
  name: 'Ambient',
  role: null,
};

/**
 * Ambient acting for a team on its own (a schedule firing, an automation answering a delivery):
 * `id` names what acted (`schedule:<id>`), `name` says it for people.
 */
export function systemActor(id: string, name: string): AuditActor {
  return { type: 'system', id: id.slice(0, 255), name, role: null };
}

/** On whose behalf a change is made: an authenticated caller, or an actor acting for a team. */
export type AuditBy = Principal | { teamId: string; actor: AuditActor };

/**
 * The actor of an authenticated caller: a run-scoped key acts as its run (named by the key's
 * name, `run <id> execution <n>`), a signed-in person (no key) as the user, and any other key as
 * itself (named by its own name); a key acts on behalf of the person or agent identity it belongs
 * to.
 */
export function actorOf(by: AuditBy): AuditActor {
  if ('actor' in by) return by.actor;
  const name = by.displayName;
  const agent = by.userType === 'service_account';
  // A person signed in without an API key (a console session, an extension's strategy).
  if (!by.runId && !agent && (by.keyId === `user:${by.userId}` || by.keyId.startsWith('session:')))
    return { type: 'user', id: by.userId, name, role: by.role };
  return {
    ...(by.runId ? { type: 'run', id: by.runId } : { type: 'api_key', id: by.keyId }),
    name: by.keyName ?? null,
    role: by.role,
    onBehalfOf: { type: agent ? 'agent' : 'user', id: by.userId, name },
  };
}
