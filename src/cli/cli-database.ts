import Redis from 'ioredis';
import { DataSource, EntityManager } from 'typeorm';
import type { Invalidation, InvalidationBus } from '../common/cache/broadcast-cache';
import { BroadcastAcks } from '../common/cache/broadcast-acks';
import {
  acknowledgementChannel,
  missingAcknowledgements,
  publishInvalidations,
} from '../common/cache/invalidations';
import { randomHex } from '../common/ids';
import type { AppConfig } from '../config/app-config';
import { dataSourceOptions } from '../database/database-setup';
import { cannotConnect, parseDatabaseUrl } from '../database/database-url';
import { AuditTarget, SYSTEM_ACTOR } from '../modules/audit/audit-actor';
import { AuditEvent } from '../modules/audit/audit-event.entity';
import { AuditLog } from '../modules/audit/audit-log.service';
import { EncryptedValueRepository } from '../modules/secrets/encrypted-value.repository';
import { SecretCipher } from '../modules/secrets/secret-cipher';
import { SecretReencryption } from '../modules/secrets/secret-reencryption';
import { ApiKey } from '../modules/teams/api-key.entity';
import { ApiKeyRepository } from '../modules/teams/api-key.repository';
import { ApiKeysService } from '../modules/teams/api-keys.service';
import { Team } from '../modules/teams/team.entity';
import { TeamUserRepository } from '../modules/teams/team-user.repository';
import { TeamsService } from '../modules/teams/teams.service';
import { User } from '../modules/teams/user.entity';
import { CommandError } from './cli-errors';

export interface CliServices {
  teams: TeamsService;
  apiKeys: ApiKeysService;
  secretReencryption: SecretReencryption;
  /**
   * Makes a change the operator asks for at the command line in one transaction with its audit
   * event (actor `system`): `change` returns its result and the event to record.
   */
  audited<T>(
    change: (manager: EntityManager) => Promise<{ result: T; event: CliAuditEvent }>,
  ): Promise<T>;
}

/** What a command's change records: in which team, what was done to what. */
export interface CliAuditEvent {
  teamId: string;
  action: string;
  target: AuditTarget;
  details?: Record<string, unknown>;
}

/**
 * (Loaded by cli-context.ts only when a database command runs: TypeORM and the entities take
 * seconds to load, which every API-backed command would otherwise wait for.)
 *
 * Runs `fn` with the team services on a small DataSource of their own (no Nest, no Redis), after
 * checking that the schema is current: the CLI never migrates behind the operator's back.
 */
export async function withServices<T>(
  config: AppConfig,
  fn: (services: CliServices) => Promise<T>,
): Promise<T> {
  const dataSource = new DataSource({
    ...dataSourceOptions(config),
    entities: [Team, User, ApiKey, AuditEvent],
    extra: { connectTimeout: 5000, connectionLimit: 2 },
  });
  try {
    await dataSource.initialize();
  } catch (err) {
    throw connectionError(config, err);
  }
  try {
    if (await dataSource.showMigrations()) {
      throw new CommandError(
        'the database has pending migrations; run the "migrate" command first',
      );
    }
    const audit = new AuditLog(dataSource);
    const changes = new CliChanges();
    const result = await fn({
      teams: new TeamsService(new TeamUserRepository(dataSource), changes),
      apiKeys: new ApiKeysService(new ApiKeyRepository(dataSource), changes),
      secretReencryption: new SecretReencryption(
        dataSource,
        new SecretCipher(config),
        new EncryptedValueRepository(),
      ),
      audited: (change) =>
        dataSource.transaction(async (manager) => {
          const { result, event } = await change(manager);
          const by = { teamId: event.teamId, actor: SYSTEM_ACTOR };
          await audit.record(manager, by, event.action, event.target, event.details);
          return result;
        }),
    });
    await changes.broadcast(config);
    return result;
  } finally {
    await dataSource.destroy();
  }
}

/**
 * The CLI caches nothing; what its commands change (a revoked key) is announced to the running
 * replicas once the command's transaction has committed, and the command ends once they have
 * dropped it from their caches.
 */
class CliChanges implements InvalidationBus {
  readonly live = false;
  readonly cacheTtlMs = 0;
  private readonly pending: Invalidation[] = [];

  listen(): void {}

  changed(_manager: EntityManager | undefined, topic: string, ids: readonly string[]) {
    this.pending.push(...ids.map((id) => ({ topic, id })));
    return Promise.resolve();
  }

  /**
   * Publishes what changed and waits (at most AMBIENT_CACHE_ACK_TIMEOUT_MS) until every running
   * replica acknowledged dropping it, as a replica's own change does (see Invalidations).
   */
  async broadcast(config: AppConfig): Promise<void> {
    if (this.pending.length === 0) return;
    const connect = () => {
      const client = new Redis(config.redis.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 1,
        connectTimeout: 5000,
      });
      client.on('error', () => undefined);
      return client;
    };
    const [redis, subscriber] = [connect(), connect()];
    const timeoutMs = config.redis.cacheAckTimeoutMs;
    const asked =
      timeoutMs > 0 ? { acks: new BroadcastAcks(), from: `cli-${randomHex(8)}`, timeoutMs } : null;
    try {
      await Promise.all([redis.connect(), asked && subscriber.connect()]);
      if (asked) {
        subscriber.on('message', (_channel: string, seq: string) =>
          asked.acks.acknowledge(Number(seq)),
        );
        await subscriber.subscribe(acknowledgementChannel(config.redis.prefix, asked.from));
      }
      const outcome = await publishInvalidations(redis, config.redis.prefix, this.pending, asked);
      const missing = missingAcknowledgements(this.pending, outcome, timeoutMs);
      if (missing) process.stderr.write(`warning: ${missing}\n`);
    } catch (err) {
      process.stderr.write(
        `warning: the change is stored, but running servers were not told at once (Redis: ` +
          `${(err as Error).message}); they may accept it from cache for up to ` +
          `AMBIENT_CACHE_TTL_MS\n`,
      );
    } finally {
      redis.disconnect();
      subscriber.disconnect();
    }
  }
}

function connectionError(config: AppConfig, err: unknown): CommandError {
  const location = parseDatabaseUrl(config.database.url);
  if ((err as { code?: string }).code === 'ER_BAD_DB_ERROR') {
    return new CommandError(
      `database "${location.database}" does not exist; run the "migrate" command first`,
    );
  }
  return new CommandError(cannotConnect(location, err).message);
}
