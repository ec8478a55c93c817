import type { EntityManager } from 'typeorm';
import type { InvalidationBus } from '../../../../common/cache/broadcast-cache';
import { fake } from '../../../../../test/support/unit/fake';
import { ApiKeysService } from '../../../teams';
import type { WorkerCredential } from './worker-credential.entity';
import { WorkerCredentialRepository } from './worker-credential.repository';
import { WORKER_CREDENTIAL_TOPIC, WorkerCredentialsService } from './worker-credentials.service';

describe('WorkerCredentialsService.revoke', () => {
  const manager = {} as EntityManager;

  it("revokes the run keys handed out over it and announces it, in the revoking transaction; nothing for another team's id", async () => {
    const repository = fake<WorkerCredentialRepository>();
    const apiKeys = fake<ApiKeysService>();
    apiKeys.revokeIssuedOver.mockResolvedValue(2);
    const bus = fake<InvalidationBus>();
    bus.changed.mockResolvedValue(undefined);
    const service = new WorkerCredentialsService(repository, apiKeys, bus);

    repository.revoke.mockResolvedValueOnce({ id: 'cred-1' } as WorkerCredential);
    await service.revoke('team-a', 'cred-1', manager);
    expect(apiKeys.revokeIssuedOver).toHaveBeenCalledWith(manager, 'cred-1');
    expect(bus.changed).toHaveBeenCalledWith(manager, WORKER_CREDENTIAL_TOPIC, ['cred-1']);

    bus.changed.mockClear();
    apiKeys.revokeIssuedOver.mockClear();
    repository.revoke.mockResolvedValueOnce(null);
    expect(await service.revoke('team-a', 'cred-of-team-b', manager)).toBeNull();
    expect(apiKeys.revokeIssuedOver).not.toHaveBeenCalled();
    expect(bus.changed).not.toHaveBeenCalled();
  });
});
