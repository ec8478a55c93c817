import {
  API_OPTION_HELP,
  API_OPTIONS,
  callApi,
  JSON_OPTION,
  JSON_OPTION_HELP,
  printAnswer,
} from './api-http';
import { CliCommand, CliIo, OptionValues } from './cli-command';
import { UsageError } from './cli-errors';

/** The fields of a scheduled agent the readable output shows. */
interface ScheduleItem {
  id: string;
  name: string;
  cron_schedule: string;
  enabled: boolean;
  prompt: string;
  agent_config?: { model_id?: string; environment_id?: string } & Record<string, unknown>;
  agent_uid?: string;
  metadata?: Record<string, string>;
  created_at: string;
  updated_at: string;
  history: { last_ran: string | null; next_run: string | null };
  last_spawn_error: string | null;
}

const schedulePath = (values: OptionValues, suffix = '') =>
  `/agent/schedules/${encodeURIComponent(String(values['schedule-id']))}${suffix}`;

/** Options of `schedules create` and `schedules update`, and their help lines. */
const FIELD_OPTIONS = {
  name: { type: 'string' },
  cron: { type: 'string' },
  prompt: { type: 'string' },
  model: { type: 'string' },
  environment: { type: 'string' },
  agent: { type: 'string' },
  mode: { type: 'string' },
  metadata: { type: 'string', multiple: true },
} as const;

const FIELD_HELP = [
  '  --name <name>         a name for people',
  '  --cron <expr>         5-field cron in UTC ("0 9 * * *"), @hourly, @daily, … or "@every 15m"',
  '  --prompt <text>       what each run is asked to do',
  '  --model <id>          a model GET /agent/models lists as enabled (default: the default model)',
  '  --environment <uid>   the environment the runs use',
  '  --agent <uid>         the agent identity that executes the runs',
  '  --mode normal|plan|orchestrate',
  '  --metadata k=v        repeatable; given to every run',
];

/** The labels `schedules get` prints, in order, each when the schedule has that field. */
const SCHEDULE_FIELDS_HELP = [
  '  id, name, cron, enabled (yes, or "no (paused)"), next_run, last_ran, last_error (why the',
  '  last tick started no run), model, environment, agent, prompt, created, updated, and one',
  '  metadata.<key> line per metadata entry.',
];

function printSchedule(io: CliIo, schedule: ScheduleItem): void {
  const rows: [string, string | undefined | null][] = [
    ['id', schedule.id],
    ['name', schedule.name],
    ['cron', schedule.cron_schedule],
    ['enabled', schedule.enabled ? 'yes' : 'no (paused)'],
    ['next_run', schedule.history.next_run],
    ['last_ran', schedule.history.last_ran],
    ['last_error', schedule.last_spawn_error],
    ['model', schedule.agent_config?.model_id],
    ['environment', schedule.agent_config?.environment_id],
    ['agent', schedule.agent_uid],
    ['prompt', schedule.prompt],
    ['created', schedule.created_at],
    ['updated', schedule.updated_at],
    ...Object.entries(schedule.metadata ?? {}).map(([k, v]): [string, string] => [
      `metadata.${k}`,
      v,
    ]),
  ];
  for (const [label, value] of rows) if (value) io.out(`${label.padEnd(12)} ${value}`);
}

/** `--metadata k=v`, repeatable, as an object (the value may hold `=`). */
function metadataPairs(values: OptionValues): Record<string, string> | undefined {
  const given = values.metadata;
  const list = given === undefined ? [] : Array.isArray(given) ? given : [String(given)];
  if (list.length === 0) return undefined;
  const pairs: Record<string, string> = {};
  for (const item of list) {
    const at = item.indexOf('=');
    if (at <= 0) throw new UsageError(`--metadata must be key=value (got ${JSON.stringify(item)})`);
    pairs[item.slice(0, at)] = item.slice(at + 1);
  }
  return pairs;
}

/** The request fields the options give (only those given; the API checks every value). */
function fieldsFrom(values: OptionValues, current?: ScheduleItem): Record<string, unknown> {
  const text = (option: string) => values[option] as string | undefined;
  const body: Record<string, unknown> = {};
  if (text('name') !== undefined) body.name = text('name');
  if (text('cron') !== undefined) body.cron_schedule = text('cron');
  if (text('prompt') !== undefined) body.prompt = text('prompt');
  if (text('agent') !== undefined) body.agent_uid = text('agent');
  if (text('mode') !== undefined) body.mode = text('mode');
  const metadata = metadataPairs(values);
  if (metadata) body.metadata = metadata;
  if (text('model') !== undefined || text('environment') !== undefined) {
    body.agent_config = {
      ...current?.agent_config,
      ...(text('model') !== undefined ? { model_id: text('model') } : {}),
      ...(text('environment') !== undefined ? { environment_id: text('environment') } : {}),
    };
  }
  return body;
}

const scheduleIdCommand = (
  verb: string,
  summary: string,
  method: string,
  suffix: string,
): CliCommand => ({
  name: `schedules ${verb}`,
  synopsis: `schedules ${verb} <schedule-id> [--json]`,
  summary,
  details: [
    '',
    'Prints the schedule as `schedules get` does.',
    '',
    'Options:',
    JSON_OPTION_HELP,
    ...API_OPTION_HELP,
  ],
  options: { ...API_OPTIONS, ...JSON_OPTION },
  positionals: ['schedule-id'],
  async run(values, io) {
    const schedule = (await callApi(
      values,
      io,
      method,
      schedulePath(values, suffix),
    )) as ScheduleItem;
    printAnswer(values, io, schedule, (s) => printSchedule(io, s));
  },
});

export const SCHEDULES_COMMANDS: CliCommand[] = [
  {
    name: 'schedules list',
    synopsis: 'schedules list [--json]',
    summary: "List the team's scheduled agents by name: id, enabled/paused, cron, next run, name.",
    details: ['', 'Options:', JSON_OPTION_HELP, ...API_OPTION_HELP],
    options: { ...API_OPTIONS, ...JSON_OPTION },
    async run(values, io) {
      const answer = (await callApi(values, io, 'GET', '/agent/schedules')) as {
        schedules: ScheduleItem[];
      };
      printAnswer(values, io, answer, ({ schedules }) => {
        for (const s of schedules) {
          const state = s.enabled ? 'enabled' : 'paused';
          const next = s.history.next_run ?? '-';
          io.out(`${s.id}  ${state.padEnd(7)}  ${s.cron_schedule}  ${next}  ${s.name}`);
        }
        if (schedules.length === 0) io.err('the team has no schedules');
      });
    },
  },
  {
    name: 'schedules get',
    synopsis: 'schedules get <schedule-id> [--json]',
    summary: "A scheduled agent's cron, state, next and last run, last error, run settings.",
    details: [
      '',
      'Prints one `label  value` line per field the schedule has:',
      ...SCHEDULE_FIELDS_HELP,
      '',
      'Options:',
      '  --json          the schedule as GET /agent/schedules/{id} answers it',
      ...API_OPTION_HELP,
    ],
    options: { ...API_OPTIONS, ...JSON_OPTION },
    positionals: ['schedule-id'],
    async run(values, io) {
      const schedule = (await callApi(values, io, 'GET', schedulePath(values))) as ScheduleItem;
      printAnswer(values, io, schedule, (s) => printSchedule(io, s));
    },
  },
  {
    name: 'schedules create',
    synopsis:
      'schedules create --name <name> --cron <expr> --prompt <text> [--model <id>] [--environment <uid>] [--agent <uid>] [--metadata k=v]... [--paused] [--json]',
    summary: 'Create a scheduled agent that starts a run at each tick (UTC); prints its id.',
    details: [
      '',
      'Options:',
      ...FIELD_HELP,
      '  --paused              create it paused (`schedules resume` starts it)',
      '  --json                the created schedule as one JSON line',
      ...API_OPTION_HELP,
    ],
    options: { ...API_OPTIONS, ...JSON_OPTION, ...FIELD_OPTIONS, paused: { type: 'boolean' } },
    async run(values, io) {
      const body = { ...fieldsFrom(values), enabled: values.paused !== true };
      const created = (await callApi(values, io, 'POST', '/agent/schedules', body)) as ScheduleItem;
      io.out(values.json === true ? JSON.stringify(created) : created.id);
    },
  },
  {
    name: 'schedules update',
    synopsis: 'schedules update <schedule-id> [--name ..] [--cron ..] [--prompt ..] [..] [--json]',
    summary: 'Change a scheduled agent: only the options given; the rest keeps its values.',
    details: [
      '',
      'Options:',
      ...FIELD_HELP,
      '  --json                the updated schedule as one JSON line',
      ...API_OPTION_HELP,
      '',
      'Reads the schedule and replaces it (PUT) with the options given applied. Pausing and',
      'resuming are `schedules pause` and `schedules resume`. Prints the schedule as `get` does.',
    ],
    options: { ...API_OPTIONS, ...JSON_OPTION, ...FIELD_OPTIONS },
    positionals: ['schedule-id'],
    async run(values, io) {
      const current = (await callApi(values, io, 'GET', schedulePath(values))) as ScheduleItem;
      const changes = fieldsFrom(values, current);
      if (Object.keys(changes).length === 0) {
        throw new UsageError('nothing to change: give at least one of --name, --cron, --prompt, …');
      }
      const body = {
        name: current.name,
        cron_schedule: current.cron_schedule,
        enabled: current.enabled,
        // "" when the schedule runs a skill: omitted then, as the API asks.
        ...(current.prompt ? { prompt: current.prompt } : {}),
        ...changes,
      };
      const updated = (await callApi(
        values,
        io,
        'PUT',
        schedulePath(values),
        body,
      )) as ScheduleItem;
      printAnswer(values, io, updated, (s) => printSchedule(io, s));
    },
  },
  {
    name: 'schedules delete',
    synopsis: 'schedules delete <schedule-id>',
    summary: 'Delete a scheduled agent: no run starts for it afterwards. Prints its id.',
    details: ['', 'Options:', ...API_OPTION_HELP],
    options: { ...API_OPTIONS },
    positionals: ['schedule-id'],
    async run(values, io) {
      await callApi(values, io, 'DELETE', schedulePath(values));
      io.out(String(values['schedule-id']));
    },
  },
  scheduleIdCommand(
    'pause',
    'Pause a scheduled agent: no run starts until it is resumed.',
    'POST',
    '/pause',
  ),
  scheduleIdCommand(
    'resume',
    'Resume a paused scheduled agent: the next run is at the next tick from now.',
    'POST',
    '/resume',
  ),
];
