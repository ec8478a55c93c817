import type Dockerode from 'dockerode';
import { loadConfig } from '../../../config/app-config';
import { selectSandboxBackend } from './sandbox-selection';

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
    [],
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
