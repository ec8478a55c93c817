import { API_OPTION_HELP, API_OPTIONS, callApi, required } from './api-http';
import { CliCommand, CliIo, OptionValues } from './cli-command';
import { UsageError } from './cli-errors';
import { followRun } from './runs-commands';

/** The fields of a run the readable output of `runs list` and `runs get` shows. */
interface RunItem {
  run_id: string;
  title: string;
  state: string;
  created_at: string;
  updated_at: string;
  session_link?: string;
  started_at?: string | null;
  run_time?: string;
  status_message?: { message?: string; error_code?: string; retryable?: boolean };
  agent_config?: { model_id?: string; environment_id?: string };
  request_usage?: { inference_cost_usd?: number; compute_cost_usd?: number; total_tokens?: number };
  metadata?: Record<string, string>;
}

const runPath = (values: OptionValues, suffix = '') =>
  `/agent/runs/${encodeURIComponent(String(values['run-id']))}${suffix}`;

/** `--metadata k=v`, repeatable, as an object (the value may hold `=`). */
function metadataPairs(values: OptionValues): Record<string, string> | undefined {
  const given = values.metadata;
  const list = given === undefined ? [] : Array.isArray(given) ? given : [String(given)];
  if (list.length === 0) return undefined;
  const pairs: Record<string, string> = {};
  for (const item of list) {
    const at = item.indexOf('=');
    if (at <= 0) throw new UsageError(`--metadata must be key=value (got ${JSON.stringify(item)})`);
    const key = item.slice(0, at);
    if (key in pairs) throw new UsageError(`--metadata ${key} is given twice`);
    pairs[key] = item.slice(at + 1);
  }
  return pairs;
}

/** The labels `runs get` prints, in order; each line appears when the run has that field. */
const RUN_FIELDS_HELP = [
  '  run_id, title, state, model, environment, created, started, updated, run_time,',
  '  error (a failed run: its error code, whether a retry may help, and the message),',
  '  status (the state message of a run that has not failed), cost (USD: inference +',
  '  compute, and tokens), link, and one metadata.<key> line per metadata entry.',
];

function printRun(io: CliIo, run: RunItem): void {
  const status = run.status_message;
  const code = status?.error_code;
  const rows: [string, string | undefined][] = [
    ['run_id', run.run_id],
    ['title', run.title],
    ['state', run.state],
    ['model', run.agent_config?.model_id],
    ['environment', run.agent_config?.environment_id],
    ['created', run.created_at],
    ['started', run.started_at ?? undefined],
    ['updated', run.updated_at],
    ['run_time', run.run_time],
    ['error', code ? errorText(code, status) : undefined],
    ['status', code ? undefined : status?.message],
    ['cost', run.request_usage ? costText(run.request_usage) : undefined],
    ['link', run.session_link],
    ...Object.entries(run.metadata ?? {}).map(([k, v]): [string, string] => [`metadata.${k}`, v]),
  ];
  for (const [label, value] of rows) if (value) io.out(`${label.padEnd(12)} ${value}`);
}

/** `code (retryable): message`, the message's lines indented under it. */
function errorText(code: string, status: NonNullable<RunItem['status_message']>): string {
  const head = `${code}${status.retryable ? ' (retryable)' : ''}`;
  const message = (status.message ?? '').trim().replace(/\n/g, `\n${' '.repeat(13)}`);
  return message ? `${head}: ${message}` : head;
}

function costText(usage: NonNullable<RunItem['request_usage']>): string {
  const inference = usage.inference_cost_usd ?? 0;
  const compute = usage.compute_cost_usd ?? 0;
  const parts = [`inference $${inference.toFixed(4)}`, `compute $${compute.toFixed(4)}`];
  if (usage.total_tokens !== undefined) parts.push(`${usage.total_tokens} tokens`);
  return `$${(inference + compute).toFixed(4)} (${parts.join(', ')})`;
}

export const runsCreateCommand: CliCommand = {
  name: 'runs create',
  synopsis:
    'runs create --prompt <text> [--model <id>] [--environment <uid>] [--title <t>] [--metadata k=v]... [--watch] [--json]',
  summary:
    'Start a run; prints its id (with --watch, follows it to its end and exits with its end state).',
  details: [
    '',
    'Options:',
    '  --prompt <text>       what the agent is asked to do',
    '  --model <id>          a model GET /agent/models lists as enabled (default: the default model)',
    '  --environment <uid>   the environment to run in',
    '  --title <t>',
    '  --metadata k=v        repeatable',
    '  --watch               follow the run as `runs watch` does; exit codes as `runs watch`',
    '  --json                the answer as one JSON line (and stream events as JSON lines)',
    ...API_OPTION_HELP,
    '',
    'The request carries an Idempotency-Key, so a retry after a lost answer starts no second run.',
  ],
  options: {
    ...API_OPTIONS,
    prompt: { type: 'string' },
    model: { type: 'string' },
    environment: { type: 'string' },
    title: { type: 'string' },
    metadata: { type: 'string', multiple: true },
    watch: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(values, io) {
    const model = values.model as string | undefined;
    const environment = values.environment as string | undefined;
    const body = {
      prompt: required(values, 'prompt'),
      title: values.title as string | undefined,
      metadata: metadataPairs(values),
      config: model || environment ? { model_id: model, environment_id: environment } : undefined,
    };
    const created = (await callApi(values, io, 'POST', '/agent/runs', body)) as {
      run_id: string;
    };
    io.out(values.json === true ? JSON.stringify(created) : created.run_id);
    return values.watch === true ? followRun(values, io, created.run_id) : 0;
  },
};

/** Options of `runs list` and the GET /agent/runs query parameter each one sets. */
const LIST_FILTERS: Record<string, string> = {
  state: 'state',
  source: 'source',
  model: 'model_id',
  environment: 'environment_id',
  name: 'name',
  creator: 'creator',
  executor: 'executor',
  schedule: 'schedule_id',
  ancestor: 'ancestor_run_id',
  skill: 'skill_spec',
  'artifact-type': 'artifact_type',
  'execution-location': 'execution_location',
  'created-after': 'created_after',
  'created-before': 'created_before',
  'updated-after': 'updated_after',
  q: 'q',
  'sort-by': 'sort_by',
  'sort-order': 'sort_order',
  limit: 'limit',
  cursor: 'cursor',
};
const REPEATABLE = new Set(['state', 'source']);

export const runsListCommand: CliCommand = {
  name: 'runs list',
  synopsis: 'runs list [--limit <n>] [--state <S>]... [filters] [--json]',
  summary: 'List runs, newest first: id, state, created, model, title.',
  details: [
    '',
    'Options (the filters of GET /agent/runs; the API checks every value):',
    '  --limit <n>                 1-500 (default 20)',
    '  --state <S>                 repeatable: QUEUED, INPROGRESS, SUCCEEDED, FAILED, …',
    '  --source <S>                repeatable: API, SCHEDULED_AGENT, CUSTOM_WEBHOOK, …',
    '  --model <id>  --environment <uid>  --name <n>  --creator <uid>  --executor <uid>',
    '  --schedule <id>  --ancestor <run-id>  --skill <spec>  --artifact-type <T>',
    '  --execution-location LOCAL|REMOTE  --q <search text>',
    '  --created-after <time>  --created-before <time>  --updated-after <time>   (RFC 3339)',
    '  --metadata k=v              repeatable',
    '  --sort-by <f>  --sort-order asc|desc  --cursor <c>',
    '  --json                      the answer (runs and page_info) as one JSON line',
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    ...Object.fromEntries(
      Object.keys(LIST_FILTERS).map((option) => [
        option,
        REPEATABLE.has(option)
          ? { type: 'string' as const, multiple: true }
          : { type: 'string' as const },
      ]),
    ),
    metadata: { type: 'string', multiple: true },
    json: { type: 'boolean' },
  },
  async run(values, io) {
    const query = new URLSearchParams();
    for (const [option, param] of Object.entries(LIST_FILTERS)) {
      const value = values[option];
      for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
        query.append(param, String(item));
      }
    }
    for (const [key, value] of Object.entries(metadataPairs(values) ?? {})) {
      query.append(`metadata[${key}]`, value);
    }
    const page = (await callApi(values, io, 'GET', `/agent/runs?${query}`)) as {
      runs: RunItem[];
      page_info: { has_next_page: boolean; next_cursor: string };
    };
    if (values.json === true) {
      io.out(JSON.stringify(page));
      return;
    }
    for (const run of page.runs) {
      const model = run.agent_config?.model_id ?? '-';
      io.out(`${run.run_id}  ${run.state.padEnd(10)}  ${run.created_at}  ${model}  ${run.title}`);
    }
    if (page.page_info.has_next_page) {
      io.err(`more runs: --cursor ${page.page_info.next_cursor}`);
    }
  },
};

export const runsGetCommand: CliCommand = {
  name: 'runs get',
  synopsis: 'runs get <run-id> [--json]',
  summary: "A run's state, model, times, error, cost, link and metadata.",
  details: [
    '',
    'Prints one `label  value` line per field the run has:',
    ...RUN_FIELDS_HELP,
    '',
    'Options:',
    '  --json          the run as GET /agent/runs/{id} answers it',
    ...API_OPTION_HELP,
  ],
  options: { ...API_OPTIONS, json: { type: 'boolean' } },
  positionals: ['run-id'],
  async run(values, io) {
    const run = (await callApi(values, io, 'GET', runPath(values))) as RunItem;
    if (values.json === true) io.out(JSON.stringify(run));
    else printRun(io, run);
  },
};

export const runsCancelCommand: CliCommand = {
  name: 'runs cancel',
  synopsis: 'runs cancel <run-id>',
  summary: 'Cancel a run that has not ended; prints its id.',
  details: ['', 'Options:', ...API_OPTION_HELP],
  options: { ...API_OPTIONS },
  positionals: ['run-id'],
  async run(values, io) {
    io.out(String(await callApi(values, io, 'POST', runPath(values, '/cancel'))));
  },
};

/** What each follow-up outcome of the API means, in the words `runs followup` prints. */
const FOLLOWUP_OUTCOMES: Record<string, string> = {
  live_session: 'delivered: the running agent reads it next',
  queued_prompt: 'queued: the run reads it when it starts',
  queue_pending: 'queued: the run reads it when it starts',
  handoff_execution: 'continuing: the ended run starts again with it',
};

export const runsFollowupCommand: CliCommand = {
  name: 'runs followup',
  synopsis: 'runs followup <run-id> --message <text> [--json]',
  summary: 'Send a follow-up message to a run; prints how it was taken and the follow-up id.',
  details: [
    '',
    'Prints "delivered" (the running agent reads it next), "queued" (the run reads it when it',
    'starts) or "continuing" (the ended run starts again with it), and the follow-up id.',
    '',
    'Options:',
    '  --message <text>',
    '  --json          the answer as one JSON line (outcome as the API names it)',
    ...API_OPTION_HELP,
  ],
  options: { ...API_OPTIONS, message: { type: 'string' }, json: { type: 'boolean' } },
  positionals: ['run-id'],
  async run(values, io) {
    const answer = (await callApi(values, io, 'POST', runPath(values, '/followups'), {
      message: required(values, 'message'),
    })) as { followup_id: string | null; outcome: string };
    const taken = FOLLOWUP_OUTCOMES[answer.outcome] ?? answer.outcome;
    const id = answer.followup_id ? ` (follow-up ${answer.followup_id})` : '';
    io.out(values.json === true ? JSON.stringify(answer) : `${taken}${id}`);
  },
};

export const RUN_MANAGEMENT_COMMANDS: CliCommand[] = [
  runsCreateCommand,
  runsListCommand,
  runsGetCommand,
  runsCancelCommand,
  runsFollowupCommand,
];
