import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OidcLoginAttempt } from './oidc-login-attempt.entity';

/** The `oidc_login_attempts` table's statements: sign-ins started and not finished yet. */
@Injectable()
export class OidcLoginAttemptRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Inserts an attempt, then deletes up to 100 attempts expired by now. */
  async insertSweepingExpired(attempt: OidcLoginAttempt): Promise<void> {
    await this.dataSource.getRepository(OidcLoginAttempt).insert(attempt);
    await this.dataSource.query(`DELETE FROM oidc_login_attempts WHERE expires_at < ? LIMIT 100`, [
      new Date(),
    ]);
  }

  byState(state: string): Promise<OidcLoginAttempt | null> {
    return this.dataSource.getRepository(OidcLoginAttempt).findOneBy({ state });
  }

  /** Deletes the attempt; answers whether this call deleted it (a replay finds nothing). */
  async delete(state: string): Promise<boolean> {
    const { affected } = await this.dataSource.getRepository(OidcLoginAttempt).delete({ state });
    return Boolean(affected);
  }
}
