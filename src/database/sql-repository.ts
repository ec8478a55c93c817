import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';

/**
 * The base of a repository whose methods join a caller's transaction: each takes an optional
 * `EntityManager` and runs on it (`db(manager)`), or on the pool's manager when none is given.
 */
@Injectable()
export abstract class SqlRepository {
  constructor(@InjectDataSource() protected readonly dataSource: DataSource) {}

  protected db(manager?: EntityManager): EntityManager {
    return manager ?? this.dataSource.manager;
  }
}
