import type { BoundSecret } from '../common/egress/egress-policy';
import type { ChatMessage } from '../modules/workers/harness/harness.types';
import type { FinishReport, SetupReport } from '../modules/workers/execution-result';
import type { EnvironmentConfig } from '../modules/environments/environment-config';
import type { ExecutionConfig } from '../modules/run-config/run-config.types';
import type { RecordedEvent } from '../modules/workers/harness/execution-timeline';
import { MAX_EVENT_AGE_MS } from '../modules/workers/remote/worker-protocol';

const REQUEST_TIMEOUT_MS = 30_000;
/** start and finish-task are retried this often over transport errors and 5xx answers. */
const ATTEMPTS = 3;
const RETRY_DELAY_MS = 1000;

/** What `POST /harness-support/start` returns (see HarnessStartResponse in the OpenAPI). */
export interface ExecutionStart {
  run_id: string;
  team_id: string;
  execution_id: number;
  title: string;
  mode: string;
  prompt: string;
  skill_spec: string | null;
  /** MCP `env`/`headers` values revealed (this execution's only copy). */
  config: ExecutionConfig;
  first_execution: boolean;
  followups: string[];
  history: ChatMessage[];
  attachments: { file_name: string; mime_type: string; data: string }[];
  limits: { max_turns: number; max_run_seconds: number; command_timeout_seconds: number };
  lease_ms: number;
  /** The run's environment; `setup` null when it no longer exists. Null without one. */
  environment: {
    environment_id: string;
    setup: EnvironmentSetup | null;
    /** How the environment asks for its sandbox (absent from servers before sandboxes). */
    sandbox?: Pick<
      EnvironmentConfig,
      'docker_image' | 'network' | 'egress_allow' | 'resources'
    > | null;
  } | null;
  /** Values of the team secrets named in config.harness_auth_secrets, by name. */
  harness_secrets: Record<string, string>;
  /** config.secrets as environment variables (a host-bound secret's placeholder). */
  run_secrets: Record<string, string>;
  /** The host-bound secrets, for this worker's egress proxy (absent from older servers). */
  bound_secrets?: BoundSecret[];
}

/** How the server would prepare the run's workspace (HarnessEnvironmentSetup in the OpenAPI). */
export interface EnvironmentSetup {
  github_repos: { owner: string; repo: string }[];
  setup_commands: string[];
  setup_timeout_seconds: number;
  git_url_base: string;
  git_token: string | null;
  /** False in another team's environment: its setup commands get none of run_secrets. */
  with_run_secrets?: boolean;
}

/** A refusal of the run-scoped API, with the status and the Oz Error model's detail. */
export class RunApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  /** 401/403: this execution no longer holds its run (cancelled, taken back, ended). */
  get lostRun(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** The run-scoped API of one execution, called with the key its task assignment carried. */
export class RunApiClient {
  /** The server answered 404 to a batch of events: it predates them. */
  private batchesUnknown = false;
  constructor(
    private readonly apiUrl: string,
    private readonly runKey: string,
  ) {}

  start(): Promise<ExecutionStart> {
    return this.withRetries(() => this.post<ExecutionStart>('start'));
  }

  heartbeat(): Promise<{ state: string; lease_expires_at: string }> {
    return this.post('heartbeat');
  }

  async recordMessages(messages: ChatMessage[]): Promise<void> {
    await this.post('messages', { messages });
  }

  async takeFollowups(): Promise<string[]> {
    return (await this.post<{ messages: string[] }>('followups')).messages;
  }

  async appendEvent(eventType: string, payload?: Record<string, unknown>): Promise<void> {
    await this.post('events', { event_type: eventType, ...(payload ? { payload } : {}) });
  }

  /**
   * Records events in order, all or none, each dated by how long ago it happened (the server's
   * clock dates it). A server without the batch endpoint (older than this worker) gets them one
   * by one, dated when they arrive.
   */
  async appendEvents(events: RecordedEvent[]): Promise<void> {
    if (!this.batchesUnknown) {
      const now = Date.now();
      try {
        await this.post('events/batch', {
          events: events.map(({ eventType, payload, occurredAt }) => ({
            event_type: eventType,
            ...(payload ? { payload } : {}),
            age_ms: Math.min(MAX_EVENT_AGE_MS, Math.max(0, now - occurredAt.getTime())),
          })),
        });
        return;
      } catch (err) {
        if (!(err instanceof RunApiError && err.status === 404)) throw err;
        this.batchesUnknown = true;
      }
    }
    for (const { eventType, payload } of events) await this.appendEvent(eventType, payload);
  }

  /** A failure ends the run FAILED environment_setup_failed on the server. */
  reportEnvironmentSetup(report: SetupReport): Promise<{ state: string }> {
    return this.withRetries(() => this.post('environment-setup', report));
  }

  finish(report: FinishReport): Promise<{ state: string }> {
    return this.withRetries(() => this.post('finish-task', report));
  }

  /** A refusal (4xx) is final; a server restarting or a network blip is worth another try. */
  private async withRetries<T>(call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        const final = err instanceof RunApiError && err.status < 500;
        if (final || attempt >= ATTEMPTS) throw err;
        await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * attempt));
      }
    }
  }

  private async post<T>(path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.apiUrl}/harness-support/${path}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${this.runKey}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    if (!response.ok) {
      let detail = text.slice(0, 500);
      try {
        const problem = JSON.parse(text) as { detail?: string; title?: string };
        detail = problem.detail ?? problem.title ?? detail;
      } catch {
        // not the Error model: keep the raw text
      }
      throw new RunApiError(response.status, `POST /harness-support/${path}: ${detail}`);
    }
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
