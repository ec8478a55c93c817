import type { Invalidation, InvalidationBus } from '../../../common/cache/broadcast-cache';
import { Invalidations } from '../../../common/cache/invalidations';
import { newTestService } from '../../../../test/support/unit/new-test-service';
import {
  WORKER_CREDENTIAL_TOPIC,
  WorkerCredentialsService,
} from './credentials/worker-credentials.service';
import { SelfHostedDispatcher } from './self-hosted-dispatcher.service';
import type { WorkerConnection } from './worker-connection';
import { WorkerGateway } from './worker-gateway.service';

/**
 * A revoked worker credential's connections close as soon as any replica announces the
 * revocation, not at the gateway's next periodic look (its timer never runs here: the gateway is
 * not bootstrapped).
 */
describe('WorkerGateway: revoked worker credentials', () => {
  async function gatewayWith(connections: WorkerConnection[]) {
    const listeners: ((change: Invalidation | null) => void)[] = [];
    const bus: InvalidationBus = {
      live: true,
      cacheTtlMs: 0,
      listen: (listener) => listeners.push(listener),
      changed: async () => undefined,
    };
    const built = await newTestService(WorkerGateway, [{ provide: Invalidations, useValue: bus }]);
    const dispatcher = built.fakeOf(SelfHostedDispatcher);
    Object.defineProperty(dispatcher, 'connections', { get: () => connections });
    const credentials = built.fakeOf(WorkerCredentialsService);
    const announce = (change: Invalidation | null) => listeners.forEach((l) => l(change));
    return { credentials, announce };
  }

  const connection = (credentialId: string) => {
    let closed: (code: number) => void = () => undefined;
    const closedWith = new Promise<number>((resolve) => (closed = resolve));
    const conn = {
      id: `conn-${credentialId}`,
      workerHost: 'box',
      credentialId,
      tasks: new Map(),
      close: jest.fn((code: number) => closed(code)),
    } as unknown as WorkerConnection;
    return { conn, closedWith };
  };

  it('closes the connections of a credential another replica announced revoked, and only those', async () => {
    const revoked = connection('cred-revoked');
    const live = connection('cred-live');
    const { credentials, announce } = await gatewayWith([revoked.conn, live.conn]);
    credentials.stillValid.mockResolvedValue(new Set(['cred-live']));

    announce({ topic: 'api_key', id: 'unrelated' });
    expect(credentials.stillValid).not.toHaveBeenCalled();

    announce({ topic: WORKER_CREDENTIAL_TOPIC, id: 'cred-revoked' });
    expect(await revoked.closedWith).toBe(1008);
    expect(live.conn.close).not.toHaveBeenCalled();
  });

  it('looks again after a look under way when another revocation is announced meanwhile', async () => {
    const first = connection('cred-1');
    const second = connection('cred-2');
    const { credentials, announce } = await gatewayWith([first.conn, second.conn]);
    let answerFirstLook: (ids: Set<string>) => void = () => undefined;
    credentials.stillValid
      .mockReturnValueOnce(new Promise((resolve) => (answerFirstLook = resolve)))
      .mockResolvedValue(new Set());

    announce({ topic: WORKER_CREDENTIAL_TOPIC, id: 'cred-1' });
    // cred-2 is revoked while the first look is under way (it read before that commit).
    announce({ topic: WORKER_CREDENTIAL_TOPIC, id: 'cred-2' });
    answerFirstLook(new Set(['cred-2']));

    expect(await first.closedWith).toBe(1008);
    expect(await second.closedWith).toBe(1008);
    expect(credentials.stillValid).toHaveBeenCalledTimes(2);
  });
});
