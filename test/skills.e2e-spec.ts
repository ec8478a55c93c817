import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiKeysService } from '../src/modules/teams/api-keys.service';
import { TeamsService } from '../src/modules/teams/teams.service';
import { apiClient } from './support/api-client';
import { bareRepo, pushFiles } from './support/git-repos';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

const REVIEW = `---
name: review-pr
description: Reviews a pull request.
license: MIT
---
# Review

Review pull request $ARGUMENTS carefully; start with file $1.
`;

describe('skills from environment repositories', () => {
  let environmentUid: string;
  const gitRoot = mkdtempSync(join(tmpdir(), 'ambient-skills-git-'));

  beforeAll(async () => {
    bareRepo(gitRoot, 'acme', 'web', {
      '.agents/skills/review/SKILL.md': REVIEW,
      '.claude/skills/review/SKILL.md': '---\nname: review-pr\n---\nlower precedence\n',
      '.claude/skills/deploy/SKILL.md': '# Deploy\n\nShips the web app to production.\n',
      '.warp/skills/broken/SKILL.md': '---\nname: [oops\n---\nbody\n',
    });
    bareRepo(gitRoot, 'acme', 'api', {
      '.agents/skills/deploy/SKILL.md':
        '---\ndescription: Deploys the API.\n---\nDeploy the API.\n',
    });
  });

  const { model, app, api } = useTestApp('skills', ['api', 'worker'], {
    'environments.gitUrlBase': gitRoot,
  });

  beforeAll(async () => {
    const created = await api.post('/agent/environments', {
      name: 'acme',
      github_repos: [
        { owner: 'acme', repo: 'web' },
        { owner: 'acme', repo: 'api' },
      ],
    });
    environmentUid = created.body.uid;
  });

  afterAll(async () => {
    rmSync(gitRoot, { recursive: true, force: true });
  });

  it('lists skills by name with their variants; malformed ones only on request', async () => {
    const listed = await api.get('/agent');
    expect(listed.status).toBe(200);
    expect(listed.body.agents.map((a: { name: string }) => a.name)).toEqual([
      'deploy',
      'review-pr',
    ]);
    const deploy = listed.body.agents[0];
    expect(deploy.variants.map((v: { id: string }) => v.id).sort()).toEqual([
      'acme/api:.agents/skills/deploy/SKILL.md',
      'acme/web:.claude/skills/deploy/SKILL.md',
    ]);
    const web = deploy.variants.find((v: { id: string }) => v.id.startsWith('acme/web'));
    expect(web).toMatchObject({
      description: 'Ships the web app to production.',
      source: { owner: 'acme', name: 'web', skill_path: '.claude/skills/deploy/SKILL.md' },
      environments: [{ uid: environmentUid, name: 'acme' }],
      last_run_timestamp: null,
    });
    expect(JSON.stringify(listed.body)).not.toContain('broken');

    const withMalformed = await api.get('/agent?include_malformed_skills=true&repo=acme/web');
    const broken = withMalformed.body.agents.find((a: { name: string }) => a.name === 'broken');
    expect(broken.variants[0].error).toMatch(/YAML/);
    expect(
      withMalformed.body.agents.flatMap((a: { variants: { id: string }[] }) => a.variants),
    ).not.toContainEqual(expect.objectContaining({ id: expect.stringContaining('acme/api') }));
    expect((await api.get('/agent?repo=nonsense')).status).toBe(400);
    expect((await api.get('/agent?sort_by=stars')).status).toBe(400);
  });

  it('runs a skill: SKILL.md becomes the base prompt with the arguments substituted', async () => {
    const created = await api.post('/agent/runs', {
      prompt: '42 src/app.ts',
      skill: 'web:review-pr',
      config: { environment_id: environmentUid },
    });
    expect(created.status).toBe(200);
    const run = await waitFor(
      async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
      (r) => r.state === 'SUCCEEDED',
      { what: 'the skill run to finish' },
    );
    expect(run.agent_skill).toEqual({
      name: 'review-pr',
      description: 'Reviews a pull request.',
      full_path: 'acme/web:.agents/skills/review/SKILL.md',
    });
    expect(run.agent_config.name).toBe('review-pr');
    const system = JSON.stringify(model.requests.at(-1)!.body.messages[0]);
    expect(system).toContain(
      'Review pull request 42 src/app.ts carefully; start with file src/app.ts.',
    );
    expect(system).not.toContain('lower precedence');

    const listed = await api.get('/agent?sort_by=last_run');
    expect(listed.body.agents[0].name).toBe('review-pr');
    expect(listed.body.agents[0].variants[0].last_run_timestamp).toEqual(expect.any(String));
  });

  it('rejects unknown, ambiguous and malformed skill specs naming the field', async () => {
    const cases: [object, string, RegExp][] = [
      [{ skill: 'nope' }, 'skill', /not found/],
      [{ skill: 'deploy' }, 'skill', /ambiguous; specify as repo:skill_name/],
      [{ config: { skill_spec: 'acme/web:/etc/SKILL.md' } }, 'config.skill_spec', /absolute/],
      [{ skill: 'other:deploy' }, 'skill', /no repository "other"/],
    ];
    for (const [body, field, why] of cases) {
      const res = await api.post('/agent/runs', {
        prompt: 'x',
        ...body,
        config: { environment_id: environmentUid, ...((body as { config?: object }).config ?? {}) },
      });
      expect(res.status).toBe(400);
      expect(res.body.detail).toContain(field);
      expect(res.body.detail).toMatch(why);
    }
    const ok = await api.post('/agent/runs', {
      skill: 'acme/api:deploy',
      config: { environment_id: environmentUid },
    });
    expect(ok.status).toBe(200);
  });

  it('serves skills from its cache until refresh=true', async () => {
    const names = async (query: string) =>
      (await api.get(`/agent${query}`)).body.agents.map((a: { name: string }) => a.name);
    expect(await names('?repo=acme/api')).toEqual(['deploy']);
    pushFiles(gitRoot, 'acme', 'api', {
      '.agents/skills/rollback/SKILL.md': 'Roll back the API.\n',
    });
    expect(await names('?repo=acme/api')).toEqual(['deploy']);
    expect(await names('?repo=acme/api&refresh=true')).toEqual(['deploy', 'rollback']);
  });

  it('shows another team nothing, and cannot resolve our environment for it', async () => {
    const teams = app.ambient.app.get(TeamsService);
    const user = await teams.createUser(await teams.createTeam('others'), {
      displayName: 'Other',
      role: 'admin',
    });
    const them = apiClient(
      app.baseUrl,
      (await app.ambient.app.get(ApiKeysService).create(user, 't')).key,
    );
    expect((await them.get('/agent')).body).toEqual({ agents: [] });
    const run = await them.post('/agent/runs', {
      skill: 'web:review-pr',
      config: { environment_id: environmentUid },
    });
    expect(run.status).toBe(400);
    expect(run.body.detail).toContain('config.environment_id');
  });

  it('finds skills below the root of a monorepo, not in node_modules; resolves them by name', async () => {
    const lint = '---\nname: lint-ui\n---\nLint the UI.\n';
    bareRepo(gitRoot, 'acme', 'mono', {
      'README.md': 'A monorepo.\n',
      'packages/ui/.agents/skills/lint/SKILL.md': lint,
      'packages/ui/.claude/skills/lint/SKILL.md': lint,
      'packages/a/.agents/skills/twin/SKILL.md': 'Twin A.\n',
      'packages/b/.agents/skills/twin/SKILL.md': 'Twin B.\n',
      'node_modules/dep/.agents/skills/foreign/SKILL.md': 'Not ours.\n',
    });
    const environment = await api.post('/agent/environments', {
      name: 'mono',
      github_repos: [{ owner: 'acme', repo: 'mono' }],
    });
    const listed = (await api.get('/agent?repo=acme/mono')).body.agents;
    expect(listed.map((a: { name: string }) => a.name)).toEqual(['lint-ui', 'twin']);
    // The same directory and content under .claude is the .agents skill again: one variant.
    expect(listed[0].variants).toEqual([
      expect.objectContaining({
        id: 'acme/mono:packages/ui/.agents/skills/lint/SKILL.md',
        source: {
          owner: 'acme',
          name: 'mono',
          skill_path: 'packages/ui/.agents/skills/lint/SKILL.md',
        },
        description: 'Lint the UI.',
      }),
    ]);
    expect(listed[1].variants.map((v: { id: string }) => v.id)).toEqual([
      'acme/mono:packages/a/.agents/skills/twin/SKILL.md',
      'acme/mono:packages/b/.agents/skills/twin/SKILL.md',
    ]);

    const config = { environment_id: environment.body.uid };
    const byName = await api.post('/agent/runs', { prompt: 'x', skill: 'mono:lint-ui', config });
    expect(byName.status).toBe(200);
    const byPath = await api.post('/agent/runs', {
      prompt: 'x',
      skill: 'acme/mono:packages/b/.agents/skills/twin/SKILL.md',
      config,
    });
    expect(byPath.status).toBe(200);
    for (const [created, fullPath] of [
      [byName, 'acme/mono:packages/ui/.agents/skills/lint/SKILL.md'],
      [byPath, 'acme/mono:packages/b/.agents/skills/twin/SKILL.md'],
    ] as const) {
      const run = await waitFor(
        async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
        (r) => r.state === 'SUCCEEDED',
        { what: 'the skill run to finish' },
      );
      expect(run.agent_skill.full_path).toBe(fullPath);
    }

    const twin = await api.post('/agent/runs', { prompt: 'x', skill: 'mono:twin', config });
    expect(twin.status).toBe(400);
    expect(twin.body.detail).toMatch(/^skill: "mono:twin" is ambiguous in acme\/mono/);
    expect(twin.body.detail).toContain('packages/a/.agents/skills/twin/SKILL.md');
    const foreign = await api.post('/agent/runs', { prompt: 'x', skill: 'mono:foreign', config });
    expect(foreign.status).toBe(400);
    expect(foreign.body.detail).toMatch(/not found/);
  });

  it('documents environments and skills in the OpenAPI with the Oz names', async () => {
    const doc = (await api.raw().get('/api/v1/openapi.json')).body;
    const params = (path: string) =>
      doc.paths[path].get.parameters.map((p: { name: string }) => p.name);
    expect(params('/agent')).toEqual(
      expect.arrayContaining(['repo', 'refresh', 'sort_by', 'include_malformed_skills']),
    );
    expect(params('/agent/environments')).toEqual(['sort_by']);
    for (const path of [
      '/agent/environments/{uid}',
      '/agent/environments/{uid}/grants',
      '/agent/environments/{uid}/share-link',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
    const schemas = doc.components.schemas;
    expect(Object.keys(schemas.Environment.properties)).toEqual(
      expect.arrayContaining([
        'uid',
        'config',
        'last_updated',
        'setup_failed',
        'last_task_created',
      ]),
    );
    expect(Object.keys(schemas.AgentListVariant.properties)).toEqual(
      expect.arrayContaining([
        'id',
        'description',
        'base_prompt',
        'source',
        'environments',
        'error',
      ]),
    );
    expect(schemas.AgentSkill.properties).toHaveProperty('full_path');
  });
});
