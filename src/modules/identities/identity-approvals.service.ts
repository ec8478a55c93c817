import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  BroadcastCache,
  InvalidationBus,
  optionalBroadcastCache,
} from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { AgentIdentityRepository } from './agent-identity.repository';

/** Invalidation topic of an agent identity's row, by its uid (its service account's user id). */
export const AGENT_IDENTITY_TOPIC = 'agent_identity';
const CACHED_USERS = 10_000;

/** What is cached of a user: its identity's `approvals` setting (undefined: none, or no identity). */
interface CachedApprovals {
  userId: string;
  approvals: unknown;
}

/**
 * The approval rules (the `approvals` setting, as stored) of the identity a run executes as,
 * read at every execution's start, by team and user: cached in each process, a user that is no
 * identity (a person) too. Only this setting is kept: the others change in ways that are not
 * announced (the MCP secrets' re-encryption). An update of an identity's settings is announced
 * (`changed`) and drops the entry on every replica before the update is answered, so an
 * execution that starts after it sees it (a new identity's user is new, and a deletion keeps the
 * settings). Without a broadcaster (the CLI) nothing is cached. Do not modify what it returns.
 */
@Injectable()
export class IdentityApprovals {
  private readonly cache: BroadcastCache<CachedApprovals> | null;

  constructor(
    private readonly identities: AgentIdentityRepository,
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {
    this.cache = optionalBroadcastCache(invalidations, {
      maxEntries: CACHED_USERS,
      affects: (cached, change) =>
        change.topic === AGENT_IDENTITY_TOPIC && cached.userId === change.id,
    });
  }

  /** The stored `approvals` of the team's identity whose service account is `userId`. */
  async ofUser(teamId: string, userId: string): Promise<unknown> {
    const load = async (): Promise<CachedApprovals> => ({
      userId,
      approvals: (await this.identities.settingsOfUser(teamId, userId))?.approvals,
    });
    if (!this.cache) return (await load()).approvals;
    return (await this.cache.get(`${teamId}:${userId}`, load))?.approvals;
  }

  /** Announces (after `manager`'s commit) that these identities' rows changed. */
  changed(manager: EntityManager, uids: readonly string[]): Promise<void> {
    return this.invalidations?.changed(manager, AGENT_IDENTITY_TOPIC, uids) ?? Promise.resolve();
  }
}
