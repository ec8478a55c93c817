import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { whileNamedLockHeld } from '../../database/named-lock';

/** The database's bootstrap named lock: one replica at a time makes sure of the first key. */
@Injectable()
export class BootstrapLockRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Runs `work` holding the lock, waiting up to 60 s for it; refused when it could not get it. */
  async whileLocked(work: () => Promise<void>): Promise<void> {
    const outcome = await whileNamedLockHeld(this.dataSource, 'bootstrap', 60, work);
    if (!outcome.locked) throw new Error('timed out waiting for the bootstrap lock');
  }
}
