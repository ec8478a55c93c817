import { dockerImageRefusal, parseDockerImages, registryHost } from './docker-images';

describe('AMBIENT_DOCKER_IMAGES', () => {
  it('defaults to the default image alone, and refuses unreadable entries', () => {
    expect(parseDockerImages(undefined, 'ambient-agent:bookworm')).toEqual([
      'ambient-agent:bookworm',
    ]);
    expect(parseDockerImages(' node:, ghcr.io/acme/* ,', 'd')).toEqual(['node:', 'ghcr.io/acme/*']);
    expect(() => parseDockerImages('bad image', 'd')).toThrow(/neither an image reference/);
    expect(() => parseDockerImages('ghcr.io/*/x', 'd')).toThrow(/neither|only at the end/);
  });

  it('allows exact references and prefixes; never a snapshot image', () => {
    const allowed = [
      'ambient-agent:bookworm',
      'node:',
      'registry.example.com/team/',
      'ghcr.io/acme/*',
    ];
    for (const image of [
      'ambient-agent:bookworm',
      'node:22',
      'registry.example.com/team/tool:1',
      'ghcr.io/acme/x@sha256:' + 'a'.repeat(64),
    ]) {
      expect(dockerImageRefusal(image, allowed)).toBeNull();
    }
    for (const image of [
      'ambient-agent:trixie',
      'nodejs:22',
      'registry.example.com/other/tool:1',
      '127.0.0.1:3306/x/y:1',
    ]) {
      expect(dockerImageRefusal(image, allowed)).toMatch(
        /not an image this server allows \(AMBIENT_DOCKER_IMAGES: /,
      );
    }
    for (const image of [
      'ambient-snapshot:abc',
      'localhost:5000/ambient-snapshot',
      'docker.io/library/ambient-snapshot:1',
    ]) {
      expect(dockerImageRefusal(image, ['*'])).toMatch(/environment snapshot/);
    }
    expect(dockerImageRefusal('registry.example.com/team/../x', allowed)).toMatch(
      /not an image reference/,
    );
  });

  it('finds the registry host as docker does', () => {
    expect(registryHost('node:22')).toBeNull();
    expect(registryHost('acme/tool:1')).toBeNull();
    expect(registryHost('localhost/x')).toBe('localhost');
    expect(registryHost('127.0.0.1:3306/x/y:1')).toBe('127.0.0.1:3306');
    expect(registryHost('ghcr.io/acme/x')).toBe('ghcr.io');
  });
});
