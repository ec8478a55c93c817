import type { AppConfig } from '../../../config/app-config';
import { WorkspaceService } from './workspace.service';

describe('WorkspaceService.commandEnv', () => {
  const workspaces = new WorkspaceService({ runs: { workspaceRoot: '/tmp/ws' } } as AppConfig);

  it("gives the run's secrets as variables without letting them replace Ambient's own", () => {
    const env = workspaces.commandEnv(
      { workdir: '/tmp/ws/r1', path: '/usr/bin:/bin' },
      'r1',
      { AMBIENT_RUN_KEY: 'key' },
      { NPM_TOKEN: 'npm', PATH: '/evil', HOME: '/evil', AMBIENT_RUN_KEY: 'evil' },
    );
    expect(env).toMatchObject({
      NPM_TOKEN: 'npm',
      HOME: '/tmp/ws/r1',
      AMBIENT_RUN_ID: 'r1',
      AMBIENT_RUN_KEY: 'key',
    });
    expect(env.PATH).toBe('/usr/bin:/bin');
  });

  it('passes nothing else of the server environment', () => {
    process.env.AMBIENT_TEST_CANARY = 'leak';
    try {
      expect(workspaces.commandEnv({ workdir: '/d', path: '/bin' }, 'r')).not.toHaveProperty(
        'AMBIENT_TEST_CANARY',
      );
    } finally {
      delete process.env.AMBIENT_TEST_CANARY;
    }
  });
});
