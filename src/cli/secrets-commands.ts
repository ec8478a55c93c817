import { API_OPTION_HELP, API_OPTIONS, callApi, printJson, required, valueFrom } from './api-http';
import { CliCommand } from './cli-command';

const enc = encodeURIComponent;

export const secretsListCommand: CliCommand = {
  name: 'secrets list',
  synopsis: 'secrets list [--url <base>] [--key <key>]',
  summary: "List the team's secrets (names only; values are never shown).",
  details: ['', 'Options:', ...API_OPTION_HELP],
  options: { ...API_OPTIONS },
  async run(values, io) {
    const { secrets } = (await callApi(values, io, 'GET', '/secrets')) as {
      secrets: { name: string; updated_at: string }[];
    };
    for (const s of secrets) io.out(`${s.name}  (updated ${s.updated_at})`);
    if (secrets.length === 0) io.err('the team has no secrets');
  },
};

export const secretsCreateCommand: CliCommand = {
  name: 'secrets create',
  synopsis: 'secrets create --name <NAME> (--value <v> | --value-stdin) [--description <text>]',
  summary: 'Create a team secret (stored encrypted).',
  details: [
    '',
    'Options:',
    '  --name <NAME>       letters, digits and _',
    '  --value <v>         the value (or --value-stdin to read it from stdin)',
    '  --description <t>   shown in lists',
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    name: { type: 'string' },
    value: { type: 'string' },
    'value-stdin': { type: 'boolean' },
    description: { type: 'string' },
  },
  async run(values, io) {
    const body = {
      name: required(values, 'name'),
      value: await valueFrom(values, 'value'),
      ...(values.description ? { description: values.description } : {}),
    };
    printJson(io, await callApi(values, io, 'POST', '/secrets', body));
  },
};

export const secretsUpdateCommand: CliCommand = {
  name: 'secrets update',
  synopsis: 'secrets update --name <NAME> (--value <v> | --value-stdin)',
  summary:
    "Set a secret's new value. Webhooks take it at their factory's next apply (or disable + enable).",
  details: ['', 'Options:', '  --name <NAME>', '  --value <v> | --value-stdin', ...API_OPTION_HELP],
  options: {
    ...API_OPTIONS,
    name: { type: 'string' },
    value: { type: 'string' },
    'value-stdin': { type: 'boolean' },
  },
  async run(values, io) {
    const name = required(values, 'name');
    printJson(
      io,
      await callApi(values, io, 'PUT', `/secrets/${enc(name)}`, {
        value: await valueFrom(values, 'value'),
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

export const SECRETS_COMMANDS = [
  secretsListCommand,
  secretsCreateCommand,
  secretsUpdateCommand,
  secretsDeleteCommand,
];
