import { Injectable, Logger } from '@nestjs/common';
import type { AuditBy } from '../../../audit';
import { AuditLog } from '../../../audit';
import { DefinitionApplier } from '../definition-applier.service';
import { Factory, LastSync } from '../entities/factory.entity';
import { FactoriesService } from '../factories.service';
import { FactoryStore } from '../factory-store.repository';
import { DefinitionTreeError } from './git-definition-tree';
import { RepositoryError } from './git-repository';
import { RepositoryCredentials } from './repository-credentials';

const LOCK_MS = 5 * 60_000;

/**
 * Applies a repository-backed factory's production branch when it has moved. Replicas never
 * sync one factory at once (a guarded update takes a lease on the row); a commit that failed to
 * apply is not retried until the branch moves again (or a sync is forced).
 */
@Injectable()
export class RepositorySync {
  private readonly logger = new Logger('FactorySync');

  constructor(
    private readonly store: FactoryStore,
    private readonly factories: FactoriesService,
    private readonly applier: DefinitionApplier,
    private readonly credentials: RepositoryCredentials,
    private readonly audit: AuditLog,
  ) {}

  /** `by`: who asked through the API; a `factory.apply` event commits with what it applies. */
  async sync(factory: Factory, force = false, by?: AuditBy): Promise<LastSync | null> {
    const now = new Date();
    const until = new Date(now.getTime() + LOCK_MS);
    if (!(await this.store.takeSyncLease(factory.id, now, until))) return null;
    let outcome: LastSync;
    try {
      outcome = await this.attempt(factory, force, by);
    } catch (err) {
      const message =
        err instanceof RepositoryError || err instanceof DefinitionTreeError
          ? err.message
          : `sync failed: ${(err as Error).message}`;
      outcome = { at: new Date().toISOString(), commit: null, status: 'failed', message };
    }
    await this.store.finishSync(factory.id, outcome);
    if (outcome.status !== 'unchanged') {
      this.logger.log(
        `factory ${factory.id}: ${outcome.status} ${outcome.commit ?? ''} ${outcome.message ?? ''}`.trim(),
      );
    }
    return outcome;
  }

  private async attempt(factory: Factory, force: boolean, by?: AuditBy): Promise<LastSync> {
    const location = {
      url: factory.repositoryUrl!,
      branch: factory.repositoryBranch ?? 'main',
      path: factory.repositoryPath ?? '',
    };
    const at = new Date().toISOString();
    const token = await this.credentials.token(factory.teamId, factory.repositoryCredentialsSecret);
    const head = await this.factories.git.head(location, token);
    const failedBefore = factory.lastSync?.status === 'failed' && factory.lastSync.commit === head;
    if (!force && (head === factory.appliedCommit || failedBefore)) {
      return {
        ...(factory.lastSync ?? { commit: head, status: 'unchanged' }),
        at,
        commit: head,
        status: failedBefore ? 'failed' : 'unchanged',
      };
    }
    const { commit, files } = await this.factories.git.read(location, token);
    const result = await this.applier.apply(factory.id, files, {
      commit,
      events: () =>
        by
          ? [this.audit.entry(by, 'factory.apply', { type: 'factory', id: factory.id }, { commit })]
          : [],
    });
    if (result.applied) return { at, commit, status: 'applied' };
    return {
      at,
      commit,
      status: 'failed',
      message: `the definition at ${commit.slice(0, 12)} is invalid; the previous one stays applied`,
      diagnostics: result.diagnostics.map((d) => ({ ...d })),
    };
  }
}
