import { loadConfig, Role } from '../../../config/app-config';
import { AmbientMetrics } from '../../metrics';
import { SandboxBackendRegistry } from './sandbox-backend-registry';
import { SandboxService } from './sandbox.service';
import type { SandboxBackend } from './sandbox.types';

/** A SandboxService of a process with `roles`, on a backend that keeps a warm pool. */
function serviceWith(roles: Role[]) {
  const config = loadConfig({
    AMBIENT_CONFIG_FILE: 'config/default.yaml',
    AMBIENT_SANDBOX: 'pooled',
    AMBIENT_ROLES: roles.join(','),
  });
  const warm = jest.fn();
  const backend: SandboxBackend = { name: 'pooled', open: jest.fn(), warm };
  const registry = new SandboxBackendRegistry().registerAll(
    [{ owner: 'test', entries: [{ name: 'pooled', isolated: true, create: () => backend }] }],
    undefined,
  );
  return { service: new SandboxService(config, registry, new AmbientMetrics()), warm };
}

describe('SandboxService: the warm pool by role', () => {
  it('fills the backend warm pool in a process with the worker role', async () => {
    const { service, warm } = serviceWith(['api', 'worker']);
    await service.select();
    expect(warm).toHaveBeenCalledTimes(1);
  });

  it.each([[['api']], [['scheduler']], [['api', 'scheduler']]] as Role[][][])(
    'makes nothing ahead of demand in a process with roles %j, and still describes the backend',
    async (roles) => {
      const { service, warm } = serviceWith(roles);
      const { description } = await service.select();
      expect(warm).not.toHaveBeenCalled();
      expect(description).toMatchObject({ backend: 'pooled', isolated: true });
    },
  );
});
