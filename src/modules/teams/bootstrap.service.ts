import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { SYSTEM_ACTOR, AuditLog } from '../audit';
import { ApiKeysService } from './api-keys.service';
import { BootstrapLockRepository } from './bootstrap-lock.repository';
import { TeamsService } from './teams.service';
import type { User } from './user.entity';

export const DEFAULT_TEAM = 'default';

/**
 * Makes sure someone can call the API after start: the operator's AMBIENT_BOOTSTRAP_API_KEY is
 * installed for the default team's admin (idempotently), or, on a database with no key at all,
 * a new key is created and printed once.
 */
@Injectable()
export class BootstrapService {
  private readonly logger = new Logger('Bootstrap');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly bootstrapLock: BootstrapLockRepository,
    private readonly teams: TeamsService,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditLog,
  ) {}

  ensureAccess(): Promise<void> {
    return this.bootstrapLock.whileLocked(() => this.ensureAccessLocked());
  }

  private async ensureAccessLocked(): Promise<void> {
    const bootstrapKey = this.config.bootstrapApiKey;
    if (bootstrapKey) {
      if (await this.apiKeys.existsForKey(bootstrapKey)) return;
      const { admin } = await this.defaultTeamAndAdmin();
      await this.createKey(admin, 'bootstrap', bootstrapKey);
      this.logger.log(`installed AMBIENT_BOOTSTRAP_API_KEY for team "${DEFAULT_TEAM}"`);
      return;
    }
    if ((await this.apiKeys.countActive()) > 0) return;
    const { admin } = await this.defaultTeamAndAdmin();
    const { key } = await this.createKey(admin, 'first-start');
    // Printed once, on purpose: it is the only way to learn the first key.
    process.stdout.write(
      `\n  Ambient created the first API key (team "${DEFAULT_TEAM}"). It is shown only once:\n\n    ${key}\n\n` +
        `  Use it as "Authorization: Bearer <key>". More keys: npm run cli -- api-keys create --team <name>\n\n`,
    );
  }

  /** A key made at start, with its `api_key.create` audit event (actor system). */
  private createKey(admin: User, name: string, plainKey?: string) {
    return this.dataSource.transaction(async (manager) => {
      const created = await this.apiKeys.create(admin, name, { role: 'admin', plainKey, manager });
      const by = { teamId: admin.teamId, actor: SYSTEM_ACTOR };
      await this.audit.record(
        manager,
        by,
        'api_key.create',
        { type: 'api_key', id: created.id },
        {
          name,
          user_id: admin.id,
        },
      );
      return created;
    });
  }

  private async defaultTeamAndAdmin() {
    const team =
      (await this.teams.findByName(DEFAULT_TEAM)) ?? (await this.teams.createTeam(DEFAULT_TEAM));
    const admin =
      (await this.teams.findAdmin(team)) ??
      (await this.teams.createUser(team, { displayName: 'Admin', role: 'admin' }));
    return { team, admin };
  }
}
