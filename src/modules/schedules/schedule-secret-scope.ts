import { Injectable, OnModuleInit } from '@nestjs/common';
import { TeamSecretsService } from '../secrets';
import { ScheduleRepository } from './schedule.repository';

/** Tells secrets (a module below schedules) which schedules a secret's scope may name. */
@Injectable()
export class ScheduleSecretScope implements OnModuleInit {
  constructor(
    private readonly secrets: TeamSecretsService,
    private readonly schedules: ScheduleRepository,
  ) {}

  onModuleInit(): void {
    this.secrets.addScopeOwner('schedules', (manager, teamId, ids) =>
      this.schedules.idsOfTeam(manager, teamId, ids),
    );
  }
}
