import { Inject, Injectable, Logger, OnModuleDestroy, Optional } from '@nestjs/common';
import type { InvalidationBus } from '../../common/cache/broadcast-cache';
import { Invalidations } from '../../common/cache/invalidations';
import { API_KEY_TOPIC, ApiKeysService, USER_TOPIC } from './api-keys.service';
import { SESSION_KEY_PREFIX, UserSessionsService } from './sessions/user-sessions.service';

/** Well inside the 10 s a revoked key may keep what it opened (docs/DESIGN.md "9. Invariants"). */
export const KEY_RECHECK_INTERVAL_MS = 4000;

type OnRevoked = () => void;

/**
 * What a key opened and keeps open (live run streams; workers register with worker credentials,
 * re-checked by the worker gateway) ends soon after the key stops authenticating: revoked,
 * deleted with its identity, its user deleted or moved. A console session (`session:…` key ids)
 * is watched the same way: signed out, expired, or its person removed. One
 * timer per replica checks every watched key in one batched query; a failed check (database
 * unreachable) closes nothing and the next tick tries again. A change to a watched key or to any
 * user, announced by any replica or the CLI (`Invalidations`, after its commit), is checked at
 * once: the timer only covers what no one announced (an expiry, a row changed by hand).
 */
@Injectable()
export class KeyRevocationWatch implements OnModuleDestroy {
  private readonly logger = new Logger('KeyRevocation');
  private readonly watchers = new Map<string, Set<OnRevoked>>();
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | null = null;
  /** A change arrived while a check was under way, which may have read before its commit. */
  private checkAgain = false;

  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly sessions: UserSessionsService,
    @Optional() @Inject(Invalidations) invalidations?: InvalidationBus,
  ) {
    invalidations?.listen((change) => {
      if (this.watchers.size === 0) return;
      const concerned =
        change === null ||
        change.topic === USER_TOPIC ||
        (change.topic === API_KEY_TOPIC && this.watchers.has(change.id));
      if (concerned) this.recheck();
    });
  }

  /** Calls `onRevoked` once the key no longer authenticates; the returned function stops it. */
  watch(keyId: string, onRevoked: OnRevoked): () => void {
    const set = this.watchers.get(keyId) ?? new Set<OnRevoked>();
    set.add(onRevoked);
    this.watchers.set(keyId, set);
    if (!this.timer) {
      this.timer = setInterval(() => void this.checkNow(), KEY_RECHECK_INTERVAL_MS);
      this.timer.unref();
    }
    return () => {
      set.delete(onRevoked);
      if (set.size === 0 && this.watchers.get(keyId) === set) this.watchers.delete(keyId);
      if (this.watchers.size === 0) this.stopTimer();
    };
  }

  /** How many keys are watched (for tests and diagnostics). */
  get watchedKeys(): number {
    return this.watchers.size;
  }

  /** Checks every watched key now (or joins the check in progress). */
  checkNow(): Promise<void> {
    this.checking ??= this.check()
      .catch((err: Error) => this.logger.warn(`key re-check failed: ${err.message}`))
      .finally(() => {
        this.checking = null;
        if (this.checkAgain) {
          this.checkAgain = false;
          void this.checkNow();
        }
      });
    return this.checking;
  }

  /** Checks as soon as the change can be seen: now, or right after the check under way. */
  private recheck(): void {
    if (this.checking) this.checkAgain = true;
    else void this.checkNow();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopTimer();
    await this.checking;
  }

  private async check(): Promise<void> {
    const ids = [...this.watchers.keys()];
    if (ids.length === 0) return;
    const isSession = (id: string) => id.startsWith(SESSION_KEY_PREFIX);
    const [keys, sessions] = await Promise.all([
      this.apiKeys.stillValid(ids.filter((id) => !isSession(id))),
      this.sessions.stillLive(ids.filter(isSession)),
    ]);
    const valid = new Set([...keys, ...sessions]);
    for (const id of ids) {
      if (valid.has(id)) continue;
      const set = this.watchers.get(id);
      this.watchers.delete(id);
      for (const onRevoked of set ?? []) {
        try {
          onRevoked();
        } catch (err) {
          this.logger.warn(`closing what key ${id} opened failed: ${(err as Error).message}`);
        }
      }
    }
    if (this.watchers.size === 0) this.stopTimer();
  }

  private stopTimer(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
