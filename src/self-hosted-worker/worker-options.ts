import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AppConfig, loadConfig, SandboxSettings } from '../config/app-config';
import { ExtensionSet } from '../extensions/extension-set';
import { loadExtensionModules } from '../extensions/load-extensions';
import { effectiveModelsFile } from '../config/models-file';
import { workerIdProblem } from '../modules/runs/worker-host';
import { WORKER_WS_PATH } from '../modules/workers/remote/worker-protocol';

export interface WorkerOptions {
  /** The API base URL, e.g. `https://ambient.example.com/api/v1`. */
  apiUrl: string;
  /** Where the worker websocket is (derived from the API URL unless given). */
  webSocketUrl: string;
  workerId: string;
  /** The worker credential the websocket presents (an admin creates it for this id or pool). */
  credential: string;
  /** Tasks run at once; 0 = unlimited. Assignments beyond it are rejected. */
  maxConcurrentTasks: number;
  /** Each run works in `<workspaceRoot>/<run id>`. */
  workspaceRoot: string;
  /** The model catalogue the harness resolves `model_id` in (provider keys from this environment). */
  modelsFile: string;
  /** Environment repositories are cloned from `<gitUrlBase>/<owner>/<repo>.git`; unset = the server's. */
  gitUrlBase?: string;
  /** The vendor CLIs of the claude, codex and gemini harnesses (names on PATH, or paths). */
  vendorClis: { claudeBin: string; codexBin: string; geminiBin: string };
  /** Where executions run: the server's AMBIENT_SANDBOX* settings, read on this machine. */
  sandbox: SandboxSettings;
  /** AMBIENT_EGRESS_ALLOW on this machine: what `url` MCP servers may reach beyond the public. */
  egress: { allow: string };
  /**
   * Ambient's configuration as this machine's environment gives it (with the sandbox, egress and
   * vendor CLIs above): what the extensions' factories and init get as `config`.
   */
  config: AppConfig;
  /** The built-in extension and those --extensions names (their harnesses and sandbox backends). */
  extensions: ExtensionSet;
}

export class OptionsError extends Error {}

export const USAGE = `Usage: npm run worker:self-hosted -- --api-url <url> --worker-id <id> --worker-credential <credential> [options]

Connects to Ambient as a self-hosted worker and executes the runs whose config.worker_host is <id>.

  --api-url <url>               API base URL, e.g. http://localhost:8080/api/v1 (AMBIENT_API_URL)
  --worker-id <id>              this worker's id; runs choose it with config.worker_host (AMBIENT_WORKER_ID)
  --worker-credential <cred>    the worker credential an admin created for this id or its pool
                                with POST /api/v1/worker-credentials (AMBIENT_WORKER_CREDENTIAL);
                                an API key no longer registers a worker
  --max-concurrent-tasks <n>    runs executed at once, 0 = unlimited (default 0)
  --workspace-root <dir>        run workspaces go to <dir>/<run id> (default var/self-hosted-workspaces)
  --models-file <file>          model catalogue; provider keys come from this environment
                                (AMBIENT_MODELS_FILE, default config/models.local.yaml
                                when present, else config/models.yaml)
  --git-url-base <url|dir>      clone environment repositories from <base>/<owner>/<repo>.git
                                instead of the server's AMBIENT_GIT_URL_BASE (AMBIENT_GIT_URL_BASE)
  --web-socket-url <url>        override the websocket URL derived from --api-url
  --sandbox <backend>           auto | docker | bubblewrap | process, or a backend an extension
                                registers (AMBIENT_SANDBOX, default auto); limits, network and
                                images as on the server (AMBIENT_SANDBOX_*, AMBIENT_DOCKER_*;
                                docs/environments-and-sandboxes.md "Isolation")
  --extensions <list>           extension modules (paths or packages, comma-separated) whose
                                harnesses and sandbox backends this worker registers, their
                                settings read from this environment (AMBIENT_EXTENSIONS;
                                docs/extending.md)
Vendor CLIs of the claude, codex and gemini harnesses: AMBIENT_CLAUDE_BIN, AMBIENT_CODEX_BIN,
AMBIENT_GEMINI_BIN (default: claude, codex, gemini on PATH). MCP url servers of runs on this
machine reach loopback and private addresses only as AMBIENT_EGRESS_ALLOW lists
(docs/api-and-runs.md "Outbound connections").
  --help                        show this help`;

/** Reads flags, falling back to environment variables; throws OptionsError naming the problem. */
export function parseWorkerOptions(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): WorkerOptions | 'help' {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        'api-url': { type: 'string' },
        'worker-id': { type: 'string' },
        'api-key': { type: 'string' },
        'worker-credential': { type: 'string' },
        'max-concurrent-tasks': { type: 'string' },
        'workspace-root': { type: 'string' },
        'models-file': { type: 'string' },
        'web-socket-url': { type: 'string' },
        'git-url-base': { type: 'string' },
        sandbox: { type: 'string' },
        extensions: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (err) {
    throw new OptionsError((err as Error).message);
  }
  if (values.help) return 'help';
  const text = (name: string, ...envNames: string[]): string | undefined => {
    const value = values[name];
    if (typeof value === 'string' && value !== '') return value;
    return envNames.map((n) => env[n]).find((v) => v !== undefined && v !== '');
  };
  const required = (name: string, ...envNames: string[]): string => {
    const value = text(name, ...envNames);
    if (!value) throw new OptionsError(`--${name} is required`);
    return value;
  };

  const apiUrl = required('api-url', 'AMBIENT_API_URL').replace(/\/+$/, '');
  const api = parseUrl('--api-url', apiUrl, ['http:', 'https:']);
  const workerId = required('worker-id', 'AMBIENT_WORKER_ID');
  const problem = workerIdProblem(workerId);
  if (problem) throw new OptionsError(`--worker-id: ${problem}`);
  if (text('api-key')) {
    throw new OptionsError(
      '--api-key: an API key no longer registers a worker; pass --worker-credential (an admin ' +
        'creates one with POST /api/v1/worker-credentials)',
    );
  }
  const credential = required('worker-credential', 'AMBIENT_WORKER_CREDENTIAL');
  const concurrency = text('max-concurrent-tasks') ?? '0';
  if (!/^\d+$/.test(concurrency)) {
    throw new OptionsError('--max-concurrent-tasks: must be a whole number (0 = unlimited)');
  }
  const webSocketUrl = text('web-socket-url') ?? defaultWebSocketUrl(api);
  parseUrl('--web-socket-url', webSocketUrl, ['ws:', 'wss:']);
  const vendorClis = {
    claudeBin: env.AMBIENT_CLAUDE_BIN || 'claude',
    codexBin: env.AMBIENT_CODEX_BIN || 'codex',
    geminiBin: env.AMBIENT_GEMINI_BIN || 'gemini',
  };
  const extensions = workerExtensions(text('extensions', 'AMBIENT_EXTENSIONS'), env);
  const { sandbox, egress, config } = serverSettings(env, text('sandbox'), extensions);
  return {
    apiUrl,
    webSocketUrl,
    workerId,
    credential,
    maxConcurrentTasks: Number(concurrency),
    workspaceRoot: resolve(text('workspace-root') ?? 'var/self-hosted-workspaces'),
    modelsFile: resolve(
      text('models-file', 'AMBIENT_MODELS_FILE') ??
        effectiveModelsFile('config/models.yaml', false),
    ),
    ...gitUrlBase(text('git-url-base', 'AMBIENT_GIT_URL_BASE')),
    vendorClis,
    sandbox,
    egress,
    config: { ...config, vendorClis, extensions: text('extensions', 'AMBIENT_EXTENSIONS') },
    extensions,
  };
}

/** The extensions --extensions names, loaded and their settings read: throws naming the entry or variable. */
function workerExtensions(setting: string | undefined, env: NodeJS.ProcessEnv): ExtensionSet {
  try {
    return ExtensionSet.of(loadExtensionModules(setting), env);
  } catch (err) {
    throw new OptionsError((err as Error).message);
  }
}

/**
 * The server's settings (config/default.yaml, AMBIENT_SANDBOX*, AMBIENT_EGRESS_ALLOW, …), read
 * here; the sandbox backend must be a built-in or one of the extensions'.
 */
function serverSettings(
  env: NodeJS.ProcessEnv,
  backend: string | undefined,
  extensions: ExtensionSet,
): Pick<WorkerOptions, 'sandbox' | 'egress' | 'config'> {
  try {
    const config = loadConfig(env, backend ? { 'sandbox.backend': backend } : {});
    extensions.sandboxBackendRegistry().checkSetting(config.sandbox.backend);
    return { sandbox: config.sandbox, egress: config.egress, config };
  } catch (err) {
    const message = (err as Error).message;
    throw new OptionsError(
      backend ? message.replace(/^(sandbox\.backend|AMBIENT_SANDBOX):/, '--sandbox:') : message,
    );
  }
}

/**
 * A URL (`https://…`, `ssh://…`, `git@host:…`) stays as given; a directory of bare repositories
 * becomes absolute, since clones run inside the workspace.
 */
function gitUrlBase(value: string | undefined): { gitUrlBase?: string } {
  if (value === undefined) return {};
  return { gitUrlBase: /^[^/]*:/.test(value) ? value : resolve(value) };
}

/** `http://host/api/v1` → `ws://host/api/v1/selfhosted/worker/ws` (https → wss). */
function defaultWebSocketUrl(api: URL): string {
  const protocol = api.protocol === 'https:' ? 'wss:' : 'ws:';
  const base = api.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${protocol}//${api.host}${base}${WORKER_WS_PATH}`;
}

function parseUrl(flag: string, value: string, protocols: string[]): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OptionsError(`${flag}: "${value}" is not a URL`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new OptionsError(
      `${flag}: must start with ${protocols.map((p) => `${p}//`).join(' or ')}`,
    );
  }
  return url;
}
