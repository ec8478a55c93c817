import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { TeamSecretsService } from '../secrets/team-secrets.service';
import { Environment } from './environment.entity';

export interface SecretsRun {
  teamId: string;
  environmentId: string | null;
  config: { secrets?: { name: string }[] };
}

/** A secret a run names that cannot be given to it; `field` says where it was named. */
export class MissingRunSecret extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/**
 * The team secrets a run gets as environment variables named after them: its environment's
 * `secrets`, then its own `config.secrets` (a name in both is the same team secret, so the run's
 * entry simply repeats it). Always resolved in the run's team: a guest team running in a shared
 * environment gets its own secrets of those names, never the owner's.
 */
@Injectable()
export class RunSecretsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly secrets: TeamSecretsService,
  ) {}

  /** Throws `MissingRunSecret` when a named secret does not exist or secrets are disabled. */
  async envFor(run: SecretsRun): Promise<Record<string, string>> {
    const refs: { name: string; field: string }[] = [];
    if (run.environmentId) {
      const environment = await this.dataSource
        .getRepository(Environment)
        .findOne({ select: { id: true, config: true }, where: { id: run.environmentId } });
      for (const [i, { name }] of (environment?.config.secrets ?? []).entries()) {
        refs.push({ name, field: `environment ${run.environmentId} secrets.${i}.name` });
      }
    }
    for (const [i, { name }] of (run.config.secrets ?? []).entries()) {
      refs.push({ name, field: `config.secrets.${i}.name` });
    }
    if (refs.length && !this.secrets.cipher.enabled) {
      throw new MissingRunSecret(
        refs[0].field,
        'team secrets are disabled on this server (the operator must set AMBIENT_SECRETS_KEY)',
      );
    }
    const env: Record<string, string> = {};
    for (const { name, field } of refs) {
      if (name in env) continue;
      const value = await this.secrets.reveal(run.teamId, name);
      if (value === null) {
        throw new MissingRunSecret(field, `the team has no secret named "${name}"`);
      }
      env[name] = value;
    }
    return env;
  }
}
