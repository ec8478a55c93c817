import type { SetupPlan } from '../modules/workers/workspace/workspace-preparation';
import type { ExecutionStart } from './run-api-client';

/**
 * The setup plan of a run's environment from its start response: the repositories and commands
 * the server sent, cloned from the worker's own `--git-url-base` when it has one (a mirror or an
 * internal git host), else from the server's. Setup commands get the run's secrets as variables,
 * as on Ambient's workers, except in another team's environment (the server says which). Null
 * when the environment no longer exists.
 */
export function setupPlanFrom(
  environment: NonNullable<ExecutionStart['environment']>,
  runSecrets: Record<string, string>,
  gitUrlBase: string | undefined,
): SetupPlan | null {
  const { setup } = environment;
  if (!setup) return null;
  return {
    environmentId: environment.environment_id,
    repos: setup.github_repos,
    setupCommands: setup.setup_commands,
    timeoutMs: setup.setup_timeout_seconds * 1000,
    gitUrlBase: gitUrlBase ?? setup.git_url_base,
    gitToken: setup.git_token,
    // Absent from older servers, which gave setup the run's secrets in every environment.
    env: setup.with_run_secrets === false ? {} : runSecrets,
  };
}
