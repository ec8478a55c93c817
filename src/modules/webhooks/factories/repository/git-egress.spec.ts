import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  startGitHttpServer,
  type GitHttpServer,
} from '../../../../../test/support/git-http-server';
import { bareRepo } from '../../../../../test/support/git-repos';
import { EgressAllowList } from '../../../../common/egress/egress-allow-list';
import { EgressGuard, type Resolver } from '../../../../common/egress/egress-guard';
import { pinnedRemote } from './git-egress';
import { GitRepository, protocolOf, RepositoryError } from './git-repository';

/** Answers `address` for every name, and records the names asked. */
function resolverTo(address: string): Resolver & { asked: string[] } {
  const asked: string[] = [];
  const resolver = (host: string) => {
    asked.push(host);
    return Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
  };
  return Object.assign(resolver, { asked });
}

const pinned = (url: string, guard: EgressGuard) => pinnedRemote(url, protocolOf(url), guard);

describe('pinnedRemote', () => {
  const publicGuard = new EgressGuard(undefined, resolverTo('140.82.121.4'));

  it('pins an https remote with curl’s resolve list, gives git the URL as checked and turns redirects off', async () => {
    expect(await pinned('https://GitHub.com/acme/x.git', publicGuard)).toEqual({
      url: 'https://github.com/acme/x.git',
      configs: ['http.followRedirects=false', 'http.curloptResolve=github.com:443:140.82.121.4'],
      env: {},
    });
    const v6 = new EgressGuard(undefined, resolverTo('2606:50c0:8000::154'));
    expect((await pinned('http://git.example:8080/x.git', v6)).configs).toContain(
      'http.curloptResolve=git.example:8080:[2606:50c0:8000::154]',
    );
  });

  it('pins ssh remotes (URL and scp-like) to the checked address, host keys under the name', async () => {
    for (const url of ['git@github.com:acme/x.git', 'ssh://git@github.com:2222/acme/x.git']) {
      const remote = await pinned(url, publicGuard);
      expect(remote.url).toBe(url);
      expect(remote.env.GIT_SSH_COMMAND).toBe(
        "ssh -o 'HostName=140.82.121.4' -o 'HostKeyAlias=github.com'",
      );
    }
  });

  it('refuses internal hosts of every transport and transports it cannot check', async () => {
    const guard = new EgressGuard();
    for (const url of [
      'https://127.0.0.1:9/x.git',
      'http://[::1]/x.git',
      'ssh://git@127.0.0.1:22/x',
      'git@127.0.0.1:x.git',
      'git://127.0.0.1/x.git',
    ]) {
      await expect(pinned(url, guard)).rejects.toThrow(/^egress refused: .* loopback address/);
    }
    for (const url of ['https://2130706433/x.git', 'https://0x7f.1/x.git']) {
      await expect(pinned(url, guard)).rejects.toThrow(
        'egress refused: 127.0.0.1 is a loopback address',
      );
    }
    await expect(pinned('https://1.2.3.4.5/x.git', publicGuard)).rejects.toThrow(
      'egress refused: the URL cannot be read',
    );
    await expect(pinned('ftp://example.com/x.git', publicGuard)).rejects.toThrow(
      'egress refused: connections over the ftp transport cannot be checked',
    );
  });

  it('leaves local paths alone (the operator allows the file transport)', async () => {
    expect(await pinned('/srv/git/x.git', new EgressGuard())).toEqual({
      url: '/srv/git/x.git',
      configs: [],
      env: {},
    });
  });
});

describe('GitRepository through the egress guard', () => {
  // Real git processes: a busy 2-core machine takes seconds to start them.
  jest.setTimeout(60_000);
  const TOKEN = 'egress-test-token';
  let git: GitHttpServer;
  let port: string;
  let listener: Server;
  let listenerPort: number;
  let connections = 0;
  let root: string;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'ambient-egress-git-'));
    bareRepo(root, 'acme', 'factory', { 'factory.yaml': 'schemaVersion: v1alpha1\nname: X\n' });
    git = await startGitHttpServer(root, TOKEN);
    port = new URL(git.url).port;
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    listenerPort = (listener.address() as AddressInfo).port;
  });
  afterAll(async () => {
    rmSync(root, { recursive: true, force: true });
    await git.close();
    await new Promise((resolve) => listener.close(resolve));
  });
  beforeEach(() => {
    connections = 0;
  });

  const location = (url: string) => ({ url, branch: 'main', path: '' });
  const allowLoopback = (resolver: Resolver) =>
    new EgressGuard(EgressAllowList.parse('127.0.0.1'), resolver);

  it('fetches over http from the checked address (the name never reaches a resolver of its own)', async () => {
    // git.test resolves nowhere but in the guard: git can only reach the server if pinned.
    const resolver = resolverTo('127.0.0.1');
    const repository = new GitRepository(['http'], allowLoopback(resolver));
    const url = `http://git.test:${port}/acme/factory.git`;
    expect(await repository.head(location(url), TOKEN)).toMatch(/^[0-9a-f]{40}$/);
    const { files } = await repository.read(location(url), TOKEN);
    expect(files.map((f) => f.path)).toEqual(['factory.yaml']);
    expect(resolver.asked).toEqual(['git.test', 'git.test']);
  });

  it('connects ssh to the checked address', async () => {
    const repository = new GitRepository(['ssh'], allowLoopback(resolverTo('127.0.0.1')));
    await expect(
      repository.head(location(`ssh://git@ssh.test:${listenerPort}/acme/x.git`)),
    ).rejects.toBeInstanceOf(RepositoryError);
    expect(connections).toBeGreaterThan(0);
  });

  it('refuses loopback before git runs: no connection, one answer for open and closed ports', async () => {
    const repository = new GitRepository(['https', 'ssh'], new EgressGuard());
    const refusal = 'egress refused: 127.0.0.1 is a loopback address (AMBIENT_EGRESS_ALLOW)';
    for (const url of [
      `https://127.0.0.1:${listenerPort}/x.git`,
      'https://127.0.0.1:9/x.git',
      `ssh://git@127.0.0.1:${listenerPort}/x`,
      'ssh://git@127.0.0.1:9/x',
    ]) {
      await expect(repository.head(location(url))).rejects.toThrow(new RepositoryError(refusal));
      await expect(repository.read(location(url))).rejects.toThrow(new RepositoryError(refusal));
    }
    expect(connections).toBe(0);
  });
});
