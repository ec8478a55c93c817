import type Dockerode from 'dockerode';
import { loadConfig } from '../../../config/app-config';
import { BUILTIN_SANDBOX_BACKENDS } from './builtin-backends';
import { SandboxBackendRegistry } from './sandbox-backend-registry';
import { selectSandboxBackend } from './sandbox-selection';
import type { SandboxBackendFactory } from './sandbox.types';

/** A daemon that answers and has only the images named. */
function fakeDocker(images: string[]): Dockerode {
  const client = {
    ping: () => Promise.resolve('OK'),
    getImage: (name: string) => ({
      inspect: () =>
        images.includes(name)
          ? Promise.resolve({ Id: `sha256:${name}` })
          : Promise.reject(
              Object.assign(new Error(`(HTTP code 404) no such image - ${name}`), {
                statusCode: 404,
              }),
            ),
    }),
  };
  return client as unknown as Dockerode;
}

/** AMBIENT_SANDBOX=docker with `image` as AMBIENT_DOCKER_IMAGE, on a daemon with only the shipped image. */
const selectWith = (image: string) =>
  selectSandboxBackend(
    loadConfig({
      AMBIENT_CONFIG_FILE: 'config/default.yaml',
      AMBIENT_SANDBOX: 'docker',
      AMBIENT_DOCKER_IMAGE: image,
    }).sandbox,
    '/tmp/ws',
    'test',
    BUILTIN_SANDBOX_BACKENDS,
    fakeDocker(['ambient-agent:bookworm']),
  );

describe('selectSandboxBackend (docker)', () => {
  it('keeps docker without a warning when the default image is there', async () => {
    const selected = await selectWith('ambient-agent:bookworm');
    expect(selected.backend?.name).toBe('docker');
    expect(selected.description).toEqual({ backend: 'docker', isolated: true });
    expect(selected.warning).toBeUndefined();
  });

  it('keeps docker but says how to build a missing default image', async () => {
    const selected = await selectWith('ambient-missing:none');
    expect(selected.backend?.name).toBe('docker');
    const fix =
      'image "ambient-missing:none" is missing: build it with sandbox/agent-image/build-image.sh ' +
      '--tag ambient-missing:none (or docker pull it, or set AMBIENT_DOCKER_IMAGE)';
    expect(selected.description).toEqual({ backend: 'docker', isolated: true, detail: fix });
    expect(selected.warning).toBe(`runs without an environment image will fail: ${fix}`);
  });
});

describe('selectSandboxBackend (registered backends)', () => {
  const settings = (backend: string) =>
    loadConfig({ AMBIENT_CONFIG_FILE: 'config/default.yaml', AMBIENT_SANDBOX: backend }).sandbox;
  const broken: SandboxBackendFactory = {
    name: 'broken',
    isolated: true,
    probe: () => Promise.resolve({ works: false, detail: 'its daemon is down' }),
    create: () => {
      throw new Error('never made: the probe failed');
    },
  };

  it('registers backends once by name: AMBIENT_SANDBOX names auto or one of them', () => {
    const registry = new SandboxBackendRegistry().registerAll(
      [{ owner: 'ambient', entries: BUILTIN_SANDBOX_BACKENDS }],
      undefined,
    );
    expect(registry.names()).toEqual(['docker', 'bubblewrap', 'process']);
    expect(() => registry.checkSetting('docker')).not.toThrow();
    expect(() => registry.checkSetting('auto')).not.toThrow();
    expect(() => registry.checkSetting('nope')).toThrow(
      'AMBIENT_SANDBOX: must be one of auto, docker, bubblewrap, process (got "nope")',
    );
    expect(() => registry.register('rival', { ...broken, name: 'docker' })).toThrow(
      'extension rival: sandbox backend "docker" is already registered by ambient',
    );
    expect(() => registry.register('rival', { ...broken, name: 'auto' })).toThrow(
      'extension rival: sandbox backend "auto" is already registered by ambient',
    );
  });

  it('auto takes docker when its daemon answers', async () => {
    const selected = await selectSandboxBackend(
      settings('auto'),
      '/tmp/ws',
      'test',
      BUILTIN_SANDBOX_BACKENDS,
      fakeDocker(['ambient-agent:bookworm']),
    );
    expect(selected.description).toEqual({ backend: 'docker', isolated: true });
  });

  it('a named backend whose probe fails is unavailable, with its reason and the fix', async () => {
    const selected = await selectSandboxBackend(settings('broken'), '/tmp/ws', 'test', [
      ...BUILTIN_SANDBOX_BACKENDS,
      broken,
    ]);
    expect(selected.backend).toBeNull();
    expect(selected.description.detail).toMatch(
      /^AMBIENT_SANDBOX=broken but its daemon is down; install Docker/,
    );
  });

  it('process is chosen only by name, with the warning that runs are not isolated', async () => {
    const selected = await selectSandboxBackend(settings('process'), '/tmp/ws', 'test');
    expect(selected.backend?.name).toBe('process');
    expect(selected.description).toEqual({
      backend: 'process',
      isolated: false,
      detail: 'AMBIENT_SANDBOX=process',
    });
    expect(selected.warning).toMatch(/runs are NOT isolated/);
  });
});
