import {
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
  OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import Redis from 'ioredis';
import { WebSocket, WebSocketServer } from 'ws';
import { ApiError } from '../../../common/errors/api-error';
import { newUid } from '../../../common/ids';
import type { InvalidationBus } from '../../../common/cache/broadcast-cache';
import { Invalidations } from '../../../common/cache/invalidations';
import { RedisConnections } from '../../../common/redis/redis.module';
import { APP_CONFIG, AppConfig } from '../../../config/app-config';
import { AmbientMetrics } from '../../metrics';
import { RunKeysService, RunSignals, workerIdProblem } from '../../runs';
import { ApiKeysService, KEY_RECHECK_INTERVAL_MS } from '../../teams';
import { scopeCovers } from './credentials/worker-credential-format';
import { WorkerCredential } from './credentials/worker-credential.entity';
import {
  WORKER_CREDENTIAL_TOPIC,
  WorkerCredentialsService,
} from './credentials/worker-credentials.service';
import { SelfHostedDispatcher } from './self-hosted-dispatcher.service';
import { WorkerConnection } from './worker-connection';
import { PRESENCE_REFRESH_MS, WorkerPresence } from './worker-presence.service';
import { parseWorkerMessage, WORKER_WS_PATH } from './worker-protocol';
import { writeUpgradeProblem } from './upgrade-problem';

const MAX_FRAME_BYTES = 1024 * 1024;
/** RFC 6455 close code of a connection whose credential no longer authenticates. */
const POLICY_VIOLATION = 1008;

/**
 * The self-hosted worker websocket, `GET /api/v1/selfhosted/worker/ws?worker_id=<id>`, on the
 * API's own HTTP server. A worker registers with a worker credential whose scope covers its id;
 * an API key (a person's, whatever its role) registers none, so the runs, and with them the
 * run-scoped keys that open `/harness-support`, go only to workers an admin enrolled. It
 * authenticates the upgrade, keeps each connection's presence in Redis, closes connections
 * silent for longer than the read timeout or whose credential was revoked, and passes every
 * frame to the dispatcher in order.
 */
@Injectable()
export class WorkerGateway implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('SelfHostedWorkers');
  private readonly replicaId = newUid(8);
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES });
  private readonly inboxes = new WeakMap<WorkerConnection, Promise<void>>();
  private readonly drops = new WeakMap<WorkerConnection, Promise<void>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private server: Server | null = null;
  private subscriber: Redis | null = null;
  private sequence = 0;
  /** The look for revoked credentials under way (recheckRevoked), and whether to look again. */
  private revokedCheck: Promise<void> | null = null;
  private checkRevokedAgain = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly adapterHost: HttpAdapterHost,
    private readonly apiKeys: ApiKeysService,
    private readonly dispatcher: SelfHostedDispatcher,
    private readonly presence: WorkerPresence,
    private readonly signals: RunSignals,
    private readonly redis: RedisConnections,
    private readonly metrics: AmbientMetrics,
    private readonly credentials: WorkerCredentialsService,
    private readonly runKeys: RunKeysService,
    @Optional() @Inject(Invalidations) invalidations?: InvalidationBus,
  ) {
    // A revocation announced by any replica (or changes possibly missed) is looked at at once.
    invalidations?.listen((change) => {
      if (change === null || change.topic === WORKER_CREDENTIAL_TOPIC) void this.recheckRevoked();
    });
  }

  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== WORKER_WS_PATH) {
      if (this.server?.listenerCount('upgrade') === 1) {
        writeUpgradeProblem(
          socket,
          ApiError.notFound(`websocket ${url.pathname}`),
          url.pathname,
          req.headers,
        );
      }
      return;
    }
    socket.on('error', () => undefined);
    void this.authorize(req, url).then(
      ({ credential, workerId }) =>
        this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws, credential, workerId)),
      (err: unknown) => {
        const problem =
          err instanceof ApiError ? err : new ApiError('internal_error', (err as Error).message);
        writeUpgradeProblem(socket, problem, url.pathname, req.headers);
      },
    );
  };

  async onApplicationBootstrap(): Promise<void> {
    this.server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.server.on('upgrade', this.onUpgrade);
    this.metrics.probes.workersConnected = () => this.dispatcher.connections.length;
    await this.subscribe();
    const checkEvery = Math.min(5000, Math.floor(this.config.selfHosted.readTimeoutMs / 4));
    this.timers.push(
      setInterval(() => this.closeSilentConnections(), checkEvery),
      setInterval(() => void this.refreshPresence(), PRESENCE_REFRESH_MS),
      setInterval(() => void this.recheckRevoked(), KEY_RECHECK_INTERVAL_MS),
    );
  }

  async onModuleDestroy(): Promise<void> {
    this.server?.off('upgrade', this.onUpgrade);
    delete this.metrics.probes.workersConnected;
    for (const timer of this.timers) clearInterval(timer);
    await this.revokedCheck;
    // RedisConnections closes the subscriber itself at shutdown.
    await this.subscriber?.unsubscribe().catch(() => undefined);
    const connections = this.dispatcher.connections;
    for (const conn of connections) conn.close(1001, 'server shutting down');
    await Promise.all(connections.map((conn) => this.dropped(conn)));
    this.wss.close();
  }

  private async authorize(
    req: IncomingMessage,
    url: URL,
  ): Promise<{ credential: WorkerCredential; workerId: string }> {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token) {
      throw new ApiError(
        'authentication_required',
        'send a worker credential as "Authorization: Bearer <credential>"',
      );
    }
    const workerId = url.searchParams.get('worker_id');
    if (!workerId) throw ApiError.invalid('worker_id', 'is required');
    const problem = workerIdProblem(workerId);
    if (problem) throw ApiError.invalid('worker_id', problem);
    const credential = await this.credentials.authenticate(token);
    if (!credential) {
      if (await this.apiKeys.authenticate(token)) {
        throw new ApiError(
          'not_authorized',
          'an API key cannot register a self-hosted worker: register with a worker credential ' +
            '(an admin creates one with POST /api/v1/worker-credentials)',
        );
      }
      throw new ApiError('authentication_required', 'unknown or revoked worker credential');
    }
    if (!scopeCovers(credential.workerId, workerId)) {
      throw new ApiError(
        'not_authorized',
        `worker_id: the worker credential "${credential.name}" registers "${credential.workerId}" only`,
      );
    }
    return { credential, workerId };
  }

  private accept(ws: WebSocket, credential: WorkerCredential, workerId: string): void {
    const conn = new WorkerConnection(
      `${this.replicaId}:${++this.sequence}`,
      credential.teamId,
      workerId,
      credential.id,
      ws,
    );
    this.inboxes.set(conn, Promise.resolve());
    ws.on('ping', () => conn.seen());
    ws.on('pong', () => conn.seen());
    ws.on('message', (data, isBinary) => {
      conn.seen();
      if (isBinary) return this.logger.warn(`binary frame from "${workerId}" ignored`);
      this.receive(conn, data.toString());
    });
    ws.on('error', (err) => this.logger.warn(`worker "${workerId}" socket: ${err.message}`));
    ws.on('close', () => void this.dropped(conn));
    this.dispatcher.add(conn);
    this.logger.log(
      `worker "${workerId}" connected (${conn.id}, team ${conn.teamId}, credential ${credential.id})`,
    );
    void this.presence
      .announce([conn])
      .catch((err: Error) => this.logger.warn(`presence of ${conn.id}: ${err.message}`));
    void this.dispatcher.dispatch(conn.teamId, workerId);
  }

  /** Frames of one connection are handled one after another, in the order they came. */
  private receive(conn: WorkerConnection, text: string): void {
    const parsed = parseWorkerMessage(text);
    if ('ignored' in parsed) {
      this.logger.warn(`frame from "${conn.workerHost}" ignored: ${parsed.ignored}`);
      return;
    }
    const previous = this.inboxes.get(conn) ?? Promise.resolve();
    const next = previous.then(() =>
      this.dispatcher.handle(conn, parsed.message).catch((err: Error) => {
        this.logger.error(`${parsed.message.type} from "${conn.workerHost}": ${err.message}`);
      }),
    );
    this.inboxes.set(conn, next);
  }

  /** Once per connection, whether it closed by itself or the server is stopping. */
  private dropped(conn: WorkerConnection): Promise<void> {
    const existing = this.drops.get(conn);
    if (existing) return existing;
    const drop = (async () => {
      this.logger.log(`worker "${conn.workerHost}" disconnected (${conn.id})`);
      this.metrics.workerDisconnected();
      await this.inboxes.get(conn);
      await this.dispatcher.remove(conn).catch((err: Error) => {
        this.logger.warn(`releasing the offers of ${conn.id} failed: ${err.message}`);
      });
      await this.presence.withdraw(conn).catch(() => undefined);
    })();
    this.drops.set(conn, drop);
    return drop;
  }

  private closeSilentConnections(): void {
    const deadline = Date.now() - this.config.selfHosted.readTimeoutMs;
    for (const conn of this.dispatcher.connections) {
      if (conn.lastSeenAt.getTime() < deadline) {
        this.logger.warn(`worker "${conn.workerHost}" (${conn.id}) went silent; closing`);
        conn.terminate();
      }
    }
  }

  /**
   * closeRevoked, one look at a time: a revocation announced during a look (which may have read
   * before its commit) makes another once it ends.
   */
  private recheckRevoked(): Promise<void> {
    if (this.revokedCheck) {
      this.checkRevokedAgain = true;
      return this.revokedCheck;
    }
    this.revokedCheck = (async () => {
      try {
        do {
          this.checkRevokedAgain = false;
          await this.closeRevoked();
        } while (this.checkRevokedAgain);
      } finally {
        // In the same step as the last test of the flag: a request after it starts a new look.
        this.revokedCheck = null;
      }
    })().catch((err: Error) => {
      this.logger.warn(`closing the connections of revoked credentials failed: ${err.message}`);
    });
    return this.revokedCheck;
  }

  /**
   * Connections whose worker credential was revoked close: at once when the revocation is
   * announced, else within KEY_RECHECK_INTERVAL_MS (a row changed by hand).
   */
  private async closeRevoked(): Promise<void> {
    const connections = this.dispatcher.connections;
    if (connections.length === 0) return;
    const ids = [...new Set(connections.map((conn) => conn.credentialId))];
    const live = await this.credentials.stillValid(ids).catch((err: Error) => {
      this.logger.warn(`worker credential re-check failed: ${err.message}`);
      return null;
    });
    if (!live) return;
    for (const conn of connections) {
      if (live.has(conn.credentialId)) continue;
      this.logger.warn(`worker "${conn.workerHost}" (${conn.id}): its credential was revoked`);
      // Executions it holds stop reporting at once; their leases lapse and the runs are recovered.
      for (const task of conn.tasks.values()) {
        const keyId = RunKeysService.keyIdOf(task.leaseOwner);
        if (keyId) await this.runKeys.revoke(keyId).catch(() => undefined);
      }
      conn.close(POLICY_VIOLATION, 'the worker credential of this connection was revoked');
    }
  }

  private async refreshPresence(): Promise<void> {
    await this.presence.announce(this.dispatcher.connections).catch((err: Error) => {
      this.logger.warn(`presence refresh failed: ${err.message}`);
    });
  }

  /** Cancels and work hints published by any replica. */
  private async subscribe(): Promise<void> {
    this.subscriber = this.redis.create();
    const { cancelChannel, selfHostedWorkChannel } = this.signals;
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel === cancelChannel) {
        void this.dispatcher.cancel(message);
      } else if (channel === selfHostedWorkChannel) {
        const hint = safeJson(message);
        if (typeof hint?.team_id === 'string' && typeof hint.worker_host === 'string') {
          void this.dispatcher.dispatch(hint.team_id, hint.worker_host);
        }
      }
    });
    await this.subscriber.subscribe(cancelChannel, selfHostedWorkChannel);
  }
}

function safeJson(text: string): Record<string, unknown> | null {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}
