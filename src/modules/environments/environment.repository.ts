import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import { Environment } from './environment.entity';

/** The `environments` reads other modules make (the workers: an execution's secrets, snapshots). */
@Injectable()
export class EnvironmentRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The environment's team and config (of any team: the caller checks), or null. */
  configOf(id: string): Promise<Pick<Environment, 'id' | 'teamId' | 'config'> | null> {
    return this.dataSource.getRepository(Environment).findOne({
      select: { id: true, teamId: true, config: true },
      where: { id },
    });
  }

  /** When each of these environments (those that exist) was last updated. */
  updatedAtOf(ids: string[]): Promise<Pick<Environment, 'id' | 'updatedAt'>[]> {
    return this.dataSource
      .getRepository(Environment)
      .find({ select: { id: true, updatedAt: true }, where: { id: In(ids) } });
  }
}
