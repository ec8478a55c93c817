import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bareRepo, pushFiles } from '../support/git-repos';
import { useTestApp } from '../support/use-test-app';
import { waitFor } from '../support/wait';

/** What a host file outside every tenant tree holds: no response may ever contain it. */
const MARKER = 'HOST-ONLY-SECRET-7c41d9e2';
const FACTORY_YAML = 'schemaVersion: v1alpha1\nname: Linked\n';
const SKILL = `---\nname: stolen\ndescription: Another team's skill.\n---\n${MARKER}\n`;

/** A stdio MCP server offering no tools, in plain JavaScript (nothing to resolve in the sandbox). */
const TOOLLESS_MCP_SERVER = `
  const send = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\\n');
  require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
    const msg = JSON.parse(line);
    if (msg.id === undefined) return;
    if (msg.method === 'initialize') {
      send(msg.id, { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
        serverInfo: { name: 'flip', version: '1' } });
    } else send(msg.id, msg.method === 'tools/list' ? { tools: [] } : {});
  });`;

/**
 * Issue 19, classes 1 and 5: the service reads tenants' repositories and workspaces with its own
 * privileges, so a symlink (or a racing one) or a `..` name must never lead it to a host file.
 */
describe('tenant content is read without following links out (security)', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'ambient-tenant-files-'));
  /** AMBIENT_GIT_URL_BASE; `<scratch>/other.git` lies next to it, outside. */
  const gitRoot = join(scratch, 'git');
  const hostDir = join(scratch, 'host');
  const hostFile = join(hostDir, 'secret.md');

  beforeAll(async () => {
    mkdirSync(join(hostDir, 'x'), { recursive: true });
    mkdirSync(join(hostDir, 'skills/h'), { recursive: true });
    writeFileSync(hostFile, `${MARKER}\n`);
    writeFileSync(join(hostDir, 'x/agent.md'), `${MARKER}\n`);
    writeFileSync(join(hostDir, 'x/SKILL.md'), SKILL);
    writeFileSync(join(hostDir, 'skills/h/SKILL.md'), SKILL);
    writeFileSync(join(hostDir, 'factory.yaml'), FACTORY_YAML);
  });

  const { model, app, api } = useTestApp('tenant_files', ['api', 'worker'], {
    'factories.repositoryProtocols': 'file',
    'environments.gitUrlBase': gitRoot,
  });

  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
  });

  const factoryRepo = (name: string, files: Record<string, string>, links = {}) => {
    bareRepo(gitRoot, 'factories', name, files, links);
    return join(gitRoot, 'factories', `${name}.git`);
  };
  const factoryNames = async () =>
    ((await api.get('/factory')).body.factories as { name: string }[]).map((f) => f.name);

  describe('repository-backed factories', () => {
    it('refuses a definition file that is a symlink to a host file, naming it; nothing is stored', async () => {
      const url = factoryRepo(
        'file-link',
        { 'factory.yaml': 'schemaVersion: v1alpha1\nname: File Link\n' },
        { 'agents/x/agent.md': hostFile },
      );
      const res = await api.post('/factory', { repository: { url } });
      expect(res.status).toBe(400);
      expect(res.body.detail).toBe(
        'repository: agents/x/agent.md is a symbolic link: a definition file must be a plain file of the repository',
      );
      expect(JSON.stringify(res.body)).not.toContain(MARKER);
      expect(await factoryNames()).not.toContain('File Link');
    });

    it('refuses a symlinked directory, and a definition path that is one', async () => {
      const url = factoryRepo(
        'dir-link',
        { 'factory.yaml': 'schemaVersion: v1alpha1\nname: Dir Link\n' },
        { agents: hostDir, def: hostDir },
      );
      const agents = await api.post('/factory', { repository: { url } });
      expect(agents.status).toBe(400);
      expect(agents.body.detail).toContain('repository: agents is a symbolic link');
      const path = await api.post('/factory', { repository: { url, path: 'def' } });
      expect(path.status).toBe(400);
      expect(path.body.detail).toContain('repository: def is a symbolic link');
      expect(JSON.stringify([agents.body, path.body])).not.toContain(MARKER);
      expect(await factoryNames()).not.toContain('Dir Link');
      expect(await factoryNames()).not.toContain('Linked');
    });

    it('a commit turning a definition file into a symlink fails its sync, naming the file; the applied definition stays', async () => {
      const url = factoryRepo('later-link', {
        'factory.yaml': 'schemaVersion: v1alpha1\nname: Later Link\n',
        'agents/x/agent.md': 'Review the code.\n',
      });
      const created = await api.post('/factory', { repository: { url } });
      expect(created.status).toBe(201);
      const uid = created.body.uid;
      pushFiles(gitRoot, 'factories', 'later-link', {}, { 'agents/x/agent.md': hostFile });
      // The poller may hold the sync lock for a moment (409): ask until the forced sync runs.
      const synced = await waitFor(
        () => api.post(`/factory/${uid}/sync`),
        (res) => res.status !== 409,
        { what: 'a forced sync' },
      );
      expect(synced.status).toBe(200);
      expect(synced.body.definition_source.last_sync).toMatchObject({
        status: 'failed',
        message:
          'agents/x/agent.md is a symbolic link: a definition file must be a plain file of the repository',
      });
      const definition = await api.get(`/factory/${uid}/definition`);
      expect(definition.status).toBe(200);
      expect(JSON.stringify(definition.body)).not.toContain(MARKER);
      expect(definition.body.files).toContainEqual({
        path: 'agents/x/agent.md',
        content: 'Review the code.\n',
      });
    });

    it.each([
      ['-x', 'leading "-"'],
      ['a/../..', '".."'],
    ])('refuses the definition path %j (400 naming repository.path)', async (path) => {
      const url = factoryRepo(`path-${Buffer.from(path).toString('hex')}`, {
        'factory.yaml': 'schemaVersion: v1alpha1\nname: Bad Path\n',
      });
      const res = await api.post('/factory', { repository: { url, path } });
      expect(res.status).toBe(400);
      expect(res.body.detail).toMatch(/^repository\.path: /);
      expect(await factoryNames()).not.toContain('Bad Path');
    });
  });

  describe('repository names are path components', () => {
    it.each([
      [{ owner: '..', repo: 'other' }, 'github_repos.0.owner: must not be ".."'],
      [{ owner: 'acme', repo: '..' }, 'github_repos.0.repo: must not be ".."'],
      [{ owner: '.', repo: 'web' }, 'github_repos.0.owner: must not be "."'],
      [{ owner: '-u', repo: 'web' }, 'github_repos.0.owner: must not start with "-"'],
      [{ owner: 'acme', repo: '--upload-pack=x' }, 'github_repos.0.repo: must not start with "-"'],
      [{ owner: 'acme/web', repo: 'x' }, 'github_repos.0.owner: '],
      [{ owner: 'acme', repo: '' }, 'github_repos.0.repo: '],
    ])('refuses %j with 400 naming the field; nothing is stored', async (repo, detail) => {
      const name = `bad-names-${Math.random().toString(36).slice(2)}`;
      const res = await api.post('/agent/environments', { name, github_repos: [repo] });
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain(detail);
      const listed = (await api.get('/agent/environments')).body.environments as {
        config: { name: string };
      }[];
      expect(listed.map((e) => e.config.name)).not.toContain(name);
    });

    it('refuses them on update too, leaving the environment as it was', async () => {
      bareRepo(gitRoot, 'acme', 'web', { 'README.md': 'web' });
      const created = await api.post('/agent/environments', {
        name: 'names-update',
        github_repos: [{ owner: 'acme', repo: 'web' }],
      });
      expect(created.status).toBe(201);
      const uid = created.body.uid;
      const res = await api.patch(`/agent/environments/${uid}`, {
        github_repos: [{ owner: '..', repo: 'other' }],
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain('github_repos.0.owner: must not be ".."');
      const after = await api.get(`/agent/environments/${uid}`);
      expect(after.body.config.github_repos).toEqual([{ owner: 'acme', repo: 'web' }]);
    });

    it('never clones outside the git base for a `..` name stored before the fix', async () => {
      // Another tenant's repository right next to the git base: <base>/../other.git.
      bareRepo(scratch, '.', 'other', { '.agents/skills/stolen/SKILL.md': SKILL });
      const created = await api.post('/agent/environments', {
        name: 'legacy-dotdot',
        github_repos: [{ owner: 'acme', repo: 'web' }],
      });
      const uid = created.body.uid;
      await app.dataSource.query(
        `UPDATE environments SET config = JSON_SET(config, '$.github_repos', JSON_ARRAY(JSON_OBJECT('owner', '..', 'repo', 'other'))) WHERE id = ?`,
        [uid],
      );
      const all = await api.get('/agent?include_malformed_skills=true&refresh=true');
      expect(all.status).toBe(200);
      expect(JSON.stringify(all.body)).not.toContain(MARKER);
      expect(JSON.stringify(all.body)).not.toContain('stolen');
      const run = await api.post('/agent/runs', {
        prompt: 'go',
        skill: '../other:stolen',
        config: { environment_id: uid },
      });
      expect(run.status).toBe(400);
      expect(run.body.detail).toMatch(/^skill: /);
      expect(run.body.detail).toContain('invalid repository name');
      expect(JSON.stringify(run.body)).not.toContain(MARKER);
    });
  });

  describe('skills', () => {
    it('a symlinked SKILL.md or skill directory does not leak the host file', async () => {
      bareRepo(
        gitRoot,
        'acme',
        'linked-skills',
        { '.agents/skills/fine/SKILL.md': '---\nname: fine\n---\nA fine skill.\n' },
        {
          '.agents/skills/file/SKILL.md': hostFile,
          '.agents/skills/dir': join(hostDir, 'x'),
          '.claude': hostDir,
        },
      );
      const created = await api.post('/agent/environments', {
        name: 'linked-skills',
        github_repos: [{ owner: 'acme', repo: 'linked-skills' }],
      });
      expect(created.status).toBe(201);
      const listed = await api.get(
        '/agent?repo=acme/linked-skills&include_malformed_skills=true&refresh=true',
      );
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain(MARKER);
      expect(listed.body.agents.map((a: { name: string }) => a.name)).toContain('fine');
      // The checkout has core.symlinks=false (a link is a file holding its target's name); either
      // way no run may get the host file as its prompt.
      const run = await api.post('/agent/runs', {
        prompt: 'go',
        skill: 'linked-skills:.agents/skills/file/SKILL.md',
        config: { environment_id: created.body.uid },
      });
      expect([200, 400]).toContain(run.status);
      expect(JSON.stringify(run.body)).not.toContain(MARKER);
      if (run.status === 200) {
        const got = await api.get(`/agent/runs/${run.body.run_id}`);
        expect(JSON.stringify(got.body)).not.toContain(MARKER);
      }
    });
  });

  describe('artifacts reported from a workspace', () => {
    /**
     * A stdio MCP server (it runs in the sandbox, beside the agent) keeps flipping `t.txt`
     * between a plain file and a symlink to the host file while the harness reads it for
     * report_artifact, as the attack in the issue did; `leak.txt` is a plain symlink.
     */
    const FLIPPER = {
      command: '/bin/sh',
      args: [
        '-c',
        'printf inside > t.txt; ln -s "$HOST_FILE" leak.txt; ' +
          '(i=0; while [ $i -lt 100000 ]; do ln -s "$HOST_FILE" l.tmp; mv -fT l.tmp t.txt; ' +
          'printf inside > f.tmp; mv -fT f.tmp t.txt; i=$((i+1)); done) >/dev/null 2>&1 & ' +
          `exec "${process.execPath}" -e "$MCP_SERVER"`,
      ],
      env: { HOST_FILE: hostFile, MCP_SERVER: TOOLLESS_MCP_SERVER },
    };
    const READS = 60;

    it('refuses a symlink to a host file, and never reads one a racing process swaps in', async () => {
      model.script('artifact-race', [
        {
          toolCalls: [
            { name: 'report_artifact', arguments: { artifact_type: 'FILE', path: 'leak.txt' } },
          ],
        },
        {
          toolCalls: Array.from({ length: READS }, () => ({
            name: 'report_artifact',
            arguments: { artifact_type: 'FILE', path: 't.txt', mime_type: 'text/plain' },
          })),
        },
        { text: 'Reported.' },
      ]);
      const created = await api.post('/agent/runs', {
        prompt: 'Report [script:artifact-race]',
        config: { mcp_servers: { flip: FLIPPER } },
      });
      expect(created.status).toBe(200);
      const run = await waitFor(
        async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
        (r) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(r.state),
        { what: 'the run to finish', timeoutMs: 90_000 },
      );
      expect({ state: run.state, message: run.status_message }).toEqual({
        state: 'SUCCEEDED',
        message: { message: 'Reported.' },
      });
      const toolResults = model.requests
        .filter((r) => r.script === 'artifact-race')
        .at(-1)!
        .body.messages.filter((m) => m.role === 'tool')
        .map((m) => String(m.content));
      expect(toolResults).toHaveLength(READS + 1);
      expect(toolResults.join('\n')).not.toContain(MARKER);
      const files = (
        run.artifacts as { artifact_type: string; data: { artifact_uid: string } }[]
      ).filter((a) => a.artifact_type === 'FILE');
      expect(files.length).toBeGreaterThan(0);
      for (const file of files) {
        const detail = await api.get(`/agent/artifacts/${file.data.artifact_uid}`);
        const url = new URL(detail.body.data.download_url);
        const body = (await api.raw().get(`${url.pathname}${url.search}`)).text;
        expect(body).toBe('inside');
      }
      // Each read got the plain file or was refused as a link (the flipper really raced them).
      for (const result of toolResults.slice(1)) {
        expect(result).toMatch(
          /^\{"artifact_uid":"\w+"\}$|t\.txt is a symbolic link|does not exist/,
        );
      }
      expect(toolResults.some((r) => r.includes('t.txt is a symbolic link'))).toBe(true);
      expect(toolResults[0]).toBe(
        'Error: "path" is not a file in the workspace (leak.txt is a symbolic link).',
      );
    });
  });
});
