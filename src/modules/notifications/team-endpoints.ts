import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  BroadcastCache,
  InvalidationBus,
  optionalBroadcastCache,
} from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { NotificationEndpointRepository } from './notification-endpoint.repository';

/** Invalidation topic of a team's notification endpoints, by team id. */
export const NOTIFICATION_ENDPOINTS_TOPIC = 'notification_endpoints';
const CACHED_TEAMS = 10_000;

interface EnabledEndpoints {
  teamId: string;
  endpoints: { id: string; events: string[] }[];
}

/**
 * A team's enabled endpoints and the events each listens to, read at every run's end: cached in
 * each process, a team without any too. Creating, changing or deleting an endpoint announces it
 * (`changed`), which drops the team's entry on every replica before the change is answered.
 * The entry only says which endpoints a notification is offered to: the delivery's INSERT
 * requires the endpoint to exist, be enabled and listen to the event
 * (NotificationDeliveryRepository.insertIfListening), so an entry a change has not reached yet
 * records nothing for an endpoint deleted or disabled meanwhile. Without a broadcaster (the CLI)
 * nothing is cached.
 */
@Injectable()
export class TeamEndpoints {
  private readonly cache: BroadcastCache<EnabledEndpoints> | null;

  constructor(
    private readonly endpoints: NotificationEndpointRepository,
    @Optional() @Inject(Invalidations) private readonly invalidations?: InvalidationBus,
  ) {
    this.cache = optionalBroadcastCache(invalidations, {
      maxEntries: CACHED_TEAMS,
      affects: (cached, change) =>
        change.topic === NOTIFICATION_ENDPOINTS_TOPIC && cached.teamId === change.id,
    });
  }

  /**
   * The team's enabled endpoints listening to `event`. Inside `manager`'s transaction a miss is
   * read in it and not stored (its snapshot may be older than the last change announced), and the
   * entry is loaded outside it: a load on another connection of the pool while the transaction
   * holds one could wait for good when many runs end at once. Do not modify what it returns.
   */
  async listening(
    teamId: string,
    event: string,
    manager?: EntityManager,
  ): Promise<{ id: string; events: string[] }[]> {
    const enabled = await this.enabledOf(teamId, manager);
    return enabled.filter((endpoint) => endpoint.events.includes(event));
  }

  private async enabledOf(
    teamId: string,
    manager?: EntityManager,
  ): Promise<{ id: string; events: string[] }[]> {
    if (!this.cache) return this.endpoints.enabledOfTeam(teamId, manager);
    const cached = this.cache.peek(teamId);
    if (cached) return cached.endpoints;
    const load = async (): Promise<EnabledEndpoints> => ({
      teamId,
      endpoints: await this.endpoints.enabledOfTeam(teamId),
    });
    if (manager?.queryRunner?.isTransactionActive) {
      // Its failure is nobody's: the next end reads again.
      if (this.cache.enabled) this.cache.get(teamId, load).catch(() => undefined);
      return this.endpoints.enabledOfTeam(teamId, manager);
    }
    return (await this.cache.get(teamId, load))?.endpoints ?? [];
  }

  /** Announces (after `manager`'s commit) that the team's endpoints changed. */
  changed(manager: EntityManager, teamId: string): Promise<void> {
    return (
      this.invalidations?.changed(manager, NOTIFICATION_ENDPOINTS_TOPIC, [teamId]) ??
      Promise.resolve()
    );
  }
}
