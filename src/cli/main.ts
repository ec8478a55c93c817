import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { AppConfig, loadConfig } from '../config/app-config';
import { provideKeys } from '../config/key-files';
import {
  apiKeysCreateCommand,
  apiKeysListCommand,
  apiKeysRevokeCommand,
} from './api-keys-commands';
import { CliCommand, CliIo, helpText, OptionValues } from './cli-command';
import { UsageError } from './cli-errors';
import { identitiesListCommand, identitiesSetLimitCommand } from './identities-commands';
import {
  identityKeysCreateCommand,
  identityKeysListCommand,
  identityKeysRevokeCommand,
} from './identity-keys-commands';
import { AUDIT_COMMANDS } from './audit-commands';
import { ENVIRONMENTS_COMMANDS } from './environments-commands';
import { FACTORIES_COMMANDS } from './factories-commands';
import { migrateCommand } from './migrate-command';
import { RUN_APPROVAL_COMMANDS } from './runs-approvals-commands';
import { RUNS_COMMANDS } from './runs-commands';
import { RUN_MANAGEMENT_COMMANDS } from './runs-manage-commands';
import { SCHEDULES_COMMANDS } from './schedules-commands';
import { SECRETS_COMMANDS } from './secrets-commands';
import { teamsCreateCommand } from './teams-commands';
import { WEBHOOKS_COMMANDS } from './webhooks-commands';

const COMMANDS: CliCommand[] = [
  migrateCommand,
  teamsCreateCommand,
  apiKeysCreateCommand,
  apiKeysListCommand,
  apiKeysRevokeCommand,
  identitiesListCommand,
  identitiesSetLimitCommand,
  identityKeysCreateCommand,
  identityKeysListCommand,
  identityKeysRevokeCommand,
  ...SECRETS_COMMANDS,
  ...FACTORIES_COMMANDS,
  ...WEBHOOKS_COMMANDS,
  ...ENVIRONMENTS_COMMANDS,
  ...RUN_MANAGEMENT_COMMANDS,
  ...RUNS_COMMANDS,
  ...RUN_APPROVAL_COMMANDS,
  ...SCHEDULES_COMMANDS,
  ...AUDIT_COMMANDS,
];

const HELP = new Set(['--help', '-h', 'help']);

function usage(commands = COMMANDS): string {
  return [
    'Usage: npm run cli -- <command> [options]   (or: node dist/src/cli/main.js <command> ...)',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.synopsis}\n      ${c.summary}`),
    '',
    'Run "<command> --help" for its options. Settings come from config/default.yaml (or',
    'AMBIENT_CONFIG_FILE) and the environment, e.g. DATABASE_URL.',
    '',
  ].join('\n');
}

/** Picks the command named by the leading words; what remains is its options. */
function resolve(args: string[]): { command: CliCommand; rest: string[] } | { help: string } {
  const word = args[0];
  if (word === undefined) throw new UsageError('missing command', usage());
  if (HELP.has(word)) return { help: usage() };
  const group = COMMANDS.filter((c) => c.name === word || c.name.startsWith(`${word} `));
  if (group.length === 0) throw new UsageError(`unknown command "${word}"`, usage());
  const exact = group.find((c) => c.name === word);
  if (exact) return { command: exact, rest: args.slice(1) };
  const sub = args[1];
  if (sub === undefined) throw new UsageError(`"${word}" needs a subcommand`, usage(group));
  if (HELP.has(sub)) return { help: usage(group) };
  const command = group.find((c) => c.name === `${word} ${sub}`);
  if (!command) throw new UsageError(`unknown command "${word} ${sub}"`, usage(group));
  return { command, rest: args.slice(2) };
}

async function main(args: string[], io: CliIo): Promise<number> {
  let command: CliCommand | undefined;
  try {
    const resolved = resolve(args);
    if ('help' in resolved) {
      io.out(resolved.help.trimEnd());
      return 0;
    }
    command = resolved.command;
    const { values } = parseCommandArgs(command, resolved.rest);
    if (values.help) {
      io.out(helpText(command).trimEnd());
      return 0;
    }
    return (await command.run(values, io)) ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`ambient: ${err.message}`);
      io.err(err.hint ?? `Run "${command?.name ?? ''} --help" for usage.`);
      return 2;
    }
    io.err(`ambient: ${firstLine(err)}`);
    return 1;
  }
}

function parseCommandArgs(command: CliCommand, args: string[]) {
  const names = command.positionals ?? [];
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: names.length > 0,
    });
  } catch (err) {
    throw new UsageError(firstLine(err), helpText(command).trimEnd());
  }
  const values: OptionValues = { ...parsed.values };
  if (values.help) return { values };
  if (parsed.positionals.length !== names.length) {
    const wanted = names.map((n) => `<${n}>`).join(' ');
    throw new UsageError(`expected ${wanted}`, helpText(command).trimEnd());
  }
  names.forEach((name, i) => (values[name] = parsed.positionals[i]));
  return { values };
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message || String(err) : String(err);
  return message.split('\n')[0];
}

let config: AppConfig | undefined;
const io: CliIo = {
  // Keys from the environment or the server's existing key files; the CLI never creates them.
  config: () => {
    if (!config) {
      config = loadConfig();
      provideKeys(config, process.env, 'read');
    }
    return config;
  },
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

// `ambient runs list | head -1`: the reader has gone, so there is nobody left to tell; exit 0
// quietly rather than with an unhandled EPIPE stack trace.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

void main(process.argv.slice(2), io).then((code) => {
  process.exitCode = code;
});
