import { API_OPTION_HELP, API_OPTIONS, callApi, printJson, required, valueFrom } from './api-http';
import { CliCommand } from './cli-command';
import { withServices } from './cli-context';
import { CommandError } from './cli-errors';

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
