import { API_KEY_STRATEGY, type Principal } from '../../common/auth/principal';
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
 * to. A credential another auth strategy recognised is recorded as a key too, by the id the
 * strategy gave it and its name, else the strategy's (`credential of the "<strategy>" strategy`):
 * never nameless, so that the event says what acted and not only whose it was.
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
    name: by.keyName ?? credentialOf(by.strategy),
    role: by.role,
    onBehalfOf: { type: agent ? 'agent' : 'user', id: by.userId, name },
  };
}

/** What names a credential without a name of its own: its strategy, unless it is an API key. */
function credentialOf(strategy: string | undefined): string | null {
  return strategy && strategy !== API_KEY_STRATEGY
    ? `credential of the "${strategy}" strategy`
    : null;
}
