import {
  API_OPTION_HELP,
  API_OPTIONS,
  callApi,
  JSON_OPTION,
  JSON_OPTION_HELP,
  printAnswer,
  printJson,
  required,
  valueFrom,
} from './api-http';
import { CliCommand } from './cli-command';
import { withServices } from './cli-context';
import { CommandError, UsageError } from './cli-errors';
import type { OptionValues } from './cli-command';

const enc = encodeURIComponent;

const SCOPE_OPTIONS = {
  environments: { type: 'string' },
  agents: { type: 'string' },
  schedules: { type: 'string' },
  unscoped: { type: 'boolean' },
} as const;

const SCOPE_HELP = [
  '  --environments <ids>  limit the secret to runs in these environments (comma-separated)',
  '  --agents <uids>       … or to runs executing as these agent identities',
  '  --schedules <ids>     … or to runs these schedules fire (admins only)',
];

/** The `scope` of a request: undefined without scope options, null with --unscoped. */
function scopeOption(values: OptionValues): Record<string, string[]> | null | undefined {
  const list = (option: string) =>
    typeof values[option] === 'string'
      ? (values[option] as string)
          .split(',')
          .map((id) => id.trim())
          .filter(Boolean)
      : undefined;
  const lists = {
    environments: list('environments'),
    agent_identities: list('agents'),
    schedules: list('schedules'),
  };
  const given = Object.values(lists).some((ids) => ids !== undefined);
  if (values.unscoped === true) {
    if (given) throw new UsageError('--unscoped cannot be combined with a scope option');
    return null;
  }
  if (!given) return undefined;
  return Object.fromEntries(Object.entries(lists).map(([key, ids]) => [key, ids ?? []]));
}

export const secretsListCommand: CliCommand = {
  name: 'secrets list',
  synopsis: 'secrets list [--json] [--url <base>] [--key <key>]',
  summary: "List the team's secrets (names only; values are never shown).",
  details: ['', 'Options:', JSON_OPTION_HELP, ...API_OPTION_HELP],
  options: { ...API_OPTIONS, ...JSON_OPTION },
  async run(values, io) {
    const answer = (await callApi(values, io, 'GET', '/secrets')) as {
      secrets: { name: string; updated_at: string; scope: unknown; purpose: string }[];
    };
    printAnswer(values, io, answer, ({ secrets }) => {
      for (const s of secrets) {
        const scoped = s.purpose === 'webhook' ? ', a webhook secret' : s.scope ? ', scoped' : '';
        io.out(`${s.name}  (updated ${s.updated_at}${scoped})`);
      }
      if (secrets.length === 0) io.err('the team has no secrets');
    });
  },
};

export const secretsCreateCommand: CliCommand = {
  name: 'secrets create',
  synopsis:
    'secrets create --name <NAME> (--value <v> | --value-stdin) [--description <text>] [--environments <ids>] [--agents <uids>] [--schedules <ids>]',
  summary: 'Create a team secret (stored encrypted).',
  details: [
    '',
    'Options:',
    '  --name <NAME>       letters, digits and _',
    '  --value <v>         the value (or --value-stdin to read it from stdin)',
    '  --description <t>   shown in lists',
    ...SCOPE_HELP,
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    ...SCOPE_OPTIONS,
    name: { type: 'string' },
    value: { type: 'string' },
    'value-stdin': { type: 'boolean' },
    description: { type: 'string' },
  },
  async run(values, io) {
    const scope = scopeOption(values);
    const body = {
      name: required(values, 'name'),
      value: await valueFrom(values, 'value'),
      ...(values.description ? { description: values.description } : {}),
      ...(scope ? { scope } : {}),
    };
    printJson(io, await callApi(values, io, 'POST', '/secrets', body));
  },
};

export const secretsUpdateCommand: CliCommand = {
  name: 'secrets update',
  synopsis:
    'secrets update --name <NAME> [--value <v> | --value-stdin] [--environments <ids>] [--agents <uids>] [--schedules <ids>] [--unscoped]',
  summary:
    "Set a secret's new value or scope. Webhooks take a new value at their factory's next apply (or disable + enable).",
  details: [
    '',
    'Options:',
    '  --name <NAME>',
    '  --value <v> | --value-stdin   required unless the scope changes',
    ...SCOPE_HELP,
    '  --unscoped            every run of the team may have it again',
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    ...SCOPE_OPTIONS,
    name: { type: 'string' },
    value: { type: 'string' },
    'value-stdin': { type: 'boolean' },
  },
  async run(values, io) {
    const name = required(values, 'name');
    const scope = scopeOption(values);
    const changesValue = scope === undefined || values.value !== undefined || values['value-stdin'];
    printJson(
      io,
      await callApi(values, io, 'PUT', `/secrets/${enc(name)}`, {
        ...(changesValue ? { value: await valueFrom(values, 'value') } : {}),
        ...(scope !== undefined ? { scope } : {}),
      }),
    );
  },
};

export const secretsDeleteCommand: CliCommand = {
  name: 'secrets delete',
  synopsis: 'secrets delete --name <NAME>',
  summary: 'Delete a team secret (refused while a webhook uses it).',
  details: ['', 'Options:', '  --name <NAME>', ...API_OPTION_HELP],
  options: { ...API_OPTIONS, name: { type: 'string' } },
  async run(values, io) {
    const name = required(values, 'name');
    await callApi(values, io, 'DELETE', `/secrets/${enc(name)}`);
    io.out(`deleted secret ${name}`);
  },
};

export const secretsReencryptCommand: CliCommand = {
  name: 'secrets reencrypt',
  synopsis: 'secrets reencrypt',
  summary:
    'Re-encrypt every stored secret (team secrets, webhook secrets) with the current AMBIENT_SECRETS_KEY.',
  details: [
    '',
    'Key rotation: give every api, ingress and worker process the new key as AMBIENT_SECRETS_KEY and',
    'the old one in AMBIENT_SECRETS_PREVIOUS_KEYS, restart them, run this command (talks to the',
    'database, like migrate), then remove the old key. Safe to run again; servers keep working',
    'throughout. Exits 1 if a value is under a key this process does not have.',
  ],
  options: {},
  async run(_values, io) {
    const config = io.config();
    if (!config.secretsKey) {
      throw new CommandError(
        `AMBIENT_SECRETS_KEY: missing (not set, and no key file in ${config.keys.dir})`,
      );
    }
    const reports = await withServices(config, ({ secretReencryption }) =>
      secretReencryption.run(),
    );
    for (const report of reports) {
      io.out(`${report.table}: ${report.reencrypted} re-encrypted`);
      for (const row of report.unreadable) io.err(`${report.table} ${row.id}: ${row.reason}`);
    }
    const unreadable = reports.reduce((sum, report) => sum + report.unreadable.length, 0);
    if (unreadable) {
      throw new CommandError(
        `${unreadable} value(s) could not be decrypted; add their key to AMBIENT_SECRETS_PREVIOUS_KEYS and run again`,
      );
    }
  },
};

export const SECRETS_COMMANDS = [
  secretsListCommand,
  secretsCreateCommand,
  secretsUpdateCommand,
  secretsDeleteCommand,
  secretsReencryptCommand,
];
