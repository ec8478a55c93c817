import { setupPlanFrom } from './environment-plan';

describe('setupPlanFrom', () => {
  const environment = {
    environment_id: 'env-1',
    setup: {
      github_repos: [{ owner: 'acme', repo: 'web' }],
      setup_commands: ['npm ci'],
      setup_timeout_seconds: 90,
      git_url_base: 'https://github.com',
      git_token: 'tok',
    },
  };

  it("uses the server's clone base and passes the token and the run's secrets", () => {
    expect(setupPlanFrom(environment, { NPM_TOKEN: 'n' }, undefined)).toEqual({
      environmentId: 'env-1',
      repos: [{ owner: 'acme', repo: 'web' }],
      setupCommands: ['npm ci'],
      timeoutMs: 90_000,
      gitUrlBase: 'https://github.com',
      gitToken: 'tok',
      env: { NPM_TOKEN: 'n' },
    });
  });

  it("gives another team's setup commands none of the run's secrets", () => {
    const guest = { ...environment, setup: { ...environment.setup, with_run_secrets: false } };
    expect(setupPlanFrom(guest, { NPM_TOKEN: 'n' }, undefined)?.env).toEqual({});
  });

  it("prefers the worker's own clone base", () => {
    expect(setupPlanFrom(environment, {}, '/srv/mirror')?.gitUrlBase).toBe('/srv/mirror');
  });

  it('has no plan when the environment no longer exists', () => {
    expect(setupPlanFrom({ environment_id: 'gone', setup: null }, {}, '/srv/mirror')).toBeNull();
  });
});
