import { Logger } from '@nestjs/common';
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

describe('WorkspaceService.remove', () => {
  it('removes the workspace and what a worker that died moving it out of a container left beside it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ambient-ws-'));
    try {
      const workspaces = new WorkspaceService({ runs: { workspaceRoot: root } } as AppConfig);
      const dir = workspaces.dirFor('r1');
      await mkdir(join(dir, 'src'), { recursive: true });
      await mkdir(join(`${dir}.returning`, 'lib'), { recursive: true });
      await writeFile(join(`${dir}.returning`, 'lib', 'half-moved.txt'), 'x');
      // Another run's workspace, whose name starts with this one's, stays.
      await mkdir(workspaces.dirFor('r10'));
      await workspaces.remove('r1');
      expect((await readdir(root)).sort()).toEqual(['r10']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('WorkspaceService at start, where Ambient runs as root', () => {
  const asRoot = process.getuid?.() === 0;

  it('makes the workspace root reachable by root alone, and warns of one made reachable by all', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'ambient-ws-root-'));
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    try {
      const made = join(parent, 'made', 'workspaces');
      await new WorkspaceService({ runs: { workspaceRoot: made } } as AppConfig).onModuleInit();
      const existing = join(parent, 'existing');
      await mkdir(existing, { mode: 0o755 });
      await chmod(existing, 0o755);
      await new WorkspaceService({ runs: { workspaceRoot: existing } } as AppConfig).onModuleInit();
      if (asRoot) {
        expect((await stat(made)).mode & 0o777).toBe(0o700);
        // One it did not make is left as it is, and named.
        expect((await stat(existing)).mode & 0o777).toBe(0o755);
        expect(warn).toHaveBeenCalledTimes(1);
        expect(String(warn.mock.calls[0]![0])).toContain(`${existing} is reachable by other users`);
      } else {
        expect(warn).not.toHaveBeenCalled();
      }
    } finally {
      warn.mockRestore();
      await rm(parent, { recursive: true, force: true });
    }
  });
});
