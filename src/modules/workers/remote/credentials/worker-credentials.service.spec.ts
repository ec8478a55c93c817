import type { EntityManager } from 'typeorm';
import type { InvalidationBus } from '../../../../common/cache/broadcast-cache';
import { fake } from '../../../../../test/support/unit/fake';
import type { WorkerCredential } from './worker-credential.entity';
import { WorkerCredentialRepository } from './worker-credential.repository';
import { WORKER_CREDENTIAL_TOPIC, WorkerCredentialsService } from './worker-credentials.service';

describe('WorkerCredentialsService.revoke', () => {
  const manager = {} as EntityManager;

  it("announces a revocation to every replica with the revoking transaction, and nothing for another team's id", async () => {
    const repository = fake<WorkerCredentialRepository>();
    const bus = fake<InvalidationBus>();
    bus.changed.mockResolvedValue(undefined);
    const service = new WorkerCredentialsService(repository, bus);

    repository.revoke.mockResolvedValueOnce({ id: 'cred-1' } as WorkerCredential);
    await service.revoke('team-a', 'cred-1', manager);
    expect(bus.changed).toHaveBeenCalledWith(manager, WORKER_CREDENTIAL_TOPIC, ['cred-1']);

    bus.changed.mockClear();
    repository.revoke.mockResolvedValueOnce(null);
    expect(await service.revoke('team-a', 'cred-of-team-b', manager)).toBeNull();
    expect(bus.changed).not.toHaveBeenCalled();
  });
});
