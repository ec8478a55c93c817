import { Injectable, OnModuleInit } from '@nestjs/common';
import { ApiError } from '../../../../common/errors/api-error';
import { TeamSecretsService } from '../../../secrets';
import { FactoryStore } from '../factory-store.repository';
import { protocolOf, RepositoryError } from './git-repository';

/**
 * The team secret whose token authenticates a repository-backed factory's fetches (sent as an
 * HTTP header through git's environment, like environment clones: never on a command line).
 */
@Injectable()
export class RepositoryCredentials implements OnModuleInit {
  constructor(
    private readonly factories: FactoryStore,
    private readonly secrets: TeamSecretsService,
  ) {}

  onModuleInit(): void {
    // A secret a factory fetches with cannot be deleted from under it (409, like webhooks').
    this.secrets.addUsageCheck(async (teamId, name, manager) => {
      const names = await this.factories.namesUsingSecret(teamId, name, manager);
      return names.length
        ? `used by factory(ies) ${names.join(', ')} to read their repository; change their credentials first`
        : null;
    });
  }

  /** 400 naming `field` unless `name` is a team secret usable for `url`. */
  async check(teamId: string, name: string, url: string, field: string): Promise<void> {
    const protocol = protocolOf(url);
    if (protocol !== 'https' && protocol !== 'http') {
      throw ApiError.invalid(field, 'a token authenticates http(s) repositories only');
    }
    if (!(await this.secrets.find(teamId, name))) {
      throw ApiError.invalid(field, `no team secret is named "${name}"`);
    }
  }

  /** The token a factory fetches with, or null when it has none. */
  async token(teamId: string, name: string | null): Promise<string | null> {
    if (!name) return null;
    const token = await this.secrets.reveal(teamId, name);
    if (token === null) throw new RepositoryError(`credentials secret "${name}" does not exist`);
    return token;
  }
}
