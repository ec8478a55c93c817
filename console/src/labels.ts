import type { components } from './api/schema';

// From the generated schema, not client.ts: the unit specs (no DOM) import these labels too.
type Schemas = components['schemas'];

/**
 * Readable labels for the API's codes, in one place: pages show these, with the code itself in a
 * title or beside it where a user may need to search for it. An unknown code (a newer server,
 * an extension) is shown as it is.
 */
function labeller<K extends string>(labels: Record<K, string>) {
  return (code: string | null | undefined): string =>
    code ? ((labels as Record<string, string>)[code] ?? code) : '—';
}

export const sourceLabel = labeller<Schemas['RunSourceType']>({
  API: 'API',
  MCP: 'MCP',
  LINEAR: 'Linear',
  SLACK: 'Slack',
  TEAMS: 'Teams',
  LOCAL: 'Local',
  SCHEDULED_AGENT: 'Schedule',
  WEB_APP: 'Console',
  GITHUB_ACTION: 'GitHub Action',
  CLOUD_MODE: 'Cloud mode',
  CLI: 'CLI',
  JIRA: 'Jira',
  SELF_IMPROVEMENT: 'Self-improvement',
  GITHUB_WEBHOOK: 'GitHub webhook',
  GITLAB_WEBHOOK: 'GitLab webhook',
  AZURE_DEVOPS_WEBHOOK: 'Azure DevOps webhook',
  AUTOFIX: 'Autofix',
  RUN_SCORER: 'Run scorer',
  ORCHESTRATION: 'Child run',
  BENCHMARK_TRIAL: 'Benchmark trial',
  CREATE_BENCHMARK_TASK: 'Benchmark task',
  CUSTOM_WEBHOOK: 'Webhook',
});

export const stateLabel = labeller<Schemas['RunState']>({
  QUEUED: 'Queued',
  PENDING: 'Pending',
  CLAIMED: 'Claimed',
  INPROGRESS: 'In progress',
  SUCCEEDED: 'Succeeded',
  FAILED: 'Failed',
  ERROR: 'Error',
  BLOCKED: 'Blocked',
  CANCELLED: 'Cancelled',
});

export const errorCodeLabel = labeller<Schemas['PlatformErrorCode']>({
  insufficient_credits: 'Not enough credits',
  feature_not_available: 'Feature not available',
  // Ambient's runs fail with it when the model provider (or a vendor CLI's) refused the key.
  external_authentication_required: 'Model provider refused the credentials',
  not_authorized: 'Not authorized',
  invalid_request: 'Invalid request',
  resource_not_found: 'Not found',
  budget_exceeded: 'Budget exceeded',
  integration_disabled: 'Integration disabled',
  integration_not_configured: 'Integration not configured',
  operation_not_supported: 'Operation not supported',
  environment_setup_failed: 'Environment setup failed',
  content_policy_violation: 'Content policy violation',
  conflict: 'Conflict',
  authentication_required: 'Authentication required',
  resource_unavailable: 'Resource unavailable',
  already_shown: 'Already shown once',
  internal_error: 'Internal error',
  approval_timeout: 'No decision in time',
});

type DisableReason = NonNullable<Schemas['ModelInfo']['disable_reason']>;
export const modelDisableLabel = labeller<DisableReason>({
  PROVIDER_OUTAGE: 'Provider outage',
  OUT_OF_REQUESTS: 'Out of requests',
  ADMIN_DISABLED: 'Turned off by an administrator',
  REQUIRES_UPGRADE: 'Needs an upgrade',
});

// Besides the Oz event types, Ambient records the environment's setup steps and the commands run.
export const timelineLabel = labeller<
  | Schemas['TimelineEvent']['event_type']
  | 'environment_setup_started'
  | 'repository_cloned'
  | 'repository_clone_failed'
  | 'setup_command_started'
  | 'setup_command_succeeded'
  | 'setup_command_failed'
  | 'setup_cached'
  | 'workspace_released'
  | 'command_started'
  | 'command_output'
  | 'command_finished'
>({
  repository_cloned: 'Repository cloned',
  repository_clone_failed: 'Repository clone failed',
  workspace_released: 'Workspace released',
  environment_setup_started: 'Environment setup',
  setup_command_started: 'Setup command',
  setup_command_succeeded: 'Setup command done',
  setup_command_failed: 'Setup command failed',
  setup_cached: 'Setup from snapshot',
  command_started: 'Command',
  command_output: 'Command output',
  command_finished: 'Command finished',
  oz_run_created: 'Created',
  oz_run_claimed: 'Claimed by a worker',
  worker_container_ready: 'Sandbox ready',
  shared_session_started: 'Session shared',
  agent_started: 'Agent started',
  oz_run_done: 'Done',
  oz_run_blocked: 'Blocked',
  oz_run_cancelled: 'Cancelled',
  oz_run_failed: 'Failed',
  oz_run_errored: 'Errored',
  vm_shutdown: 'Sandbox stopped',
});

export const authModeLabel = labeller<Schemas['CreateWebhookRequest']['auth_mode']>({
  token: 'Bearer token',
  url_token: 'Token in the URL',
  signature: 'Signature',
});
