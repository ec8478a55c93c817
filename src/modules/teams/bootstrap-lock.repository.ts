import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { databaseLockName } from '../../database/named-lock';

/** The database's bootstrap named lock: one replica at a time makes sure of the first key. */
@Injectable()
export class BootstrapLockRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` holding the lock (waiting up to 60 s for it) on a connection of its own. */
  async whileLocked(work: () => Promise<void>): Promise<void> {
    const lock = databaseLockName('bootstrap', String(this.dataSource.options.database));
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query(`SELECT GET_LOCK(?, 60)`, [lock]);
      await work();
    } finally {
      await runner.query(`SELECT RELEASE_LOCK(?)`, [lock]).catch(() => undefined);
      await runner.release();
    }
  }
}
