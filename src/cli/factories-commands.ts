import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  API_OPTION_HELP,
  API_OPTIONS,
  callApi,
  JSON_OPTION,
  JSON_OPTION_HELP,
  printAnswer,
  printJson,
  required,
} from './api-http';
import { CliCommand } from './cli-command';
import { CommandError } from './cli-errors';

const factoryOption = { factory: { type: 'string' } } as const;

export const factoriesListCommand: CliCommand = {
  name: 'factories list',
  synopsis: 'factories list [--search <text>] [--json]',
  summary: "List the team's factories: uid, kind, name.",
  details: [
    '',
    'Options:',
    '  --search <text>   substring of the name',
    JSON_OPTION_HELP,
    ...API_OPTION_HELP,
  ],
  options: { ...API_OPTIONS, ...JSON_OPTION, search: { type: 'string' } },
  async run(values, io) {
    const query = values.search ? `?search=${encodeURIComponent(String(values.search))}` : '';
    const answer = (await callApi(values, io, 'GET', `/factory${query}`)) as {
      factories: { uid: string; name: string; definition_source: { kind: string } }[];
    };
    printAnswer(values, io, answer, ({ factories }) => {
      for (const f of factories)
        io.out(`${f.uid}  ${f.definition_source.kind.padEnd(10)}  ${f.name}`);
    });
  },
};

export const factoriesCreateCommand: CliCommand = {
  name: 'factories create',
  synopsis:
    'factories create (--name <name> | --repository <git url> [--branch <b>] [--path <dir>] [--credentials-secret <name>])',
  summary: 'Create a managed factory, or one whose definition lives in a git repository.',
  details: [
    '',
    'Options:',
    '  --name <name>          a managed factory',
    '  --repository <url>     repository-backed (its production branch applies at every new commit)',
    '  --branch <b>           production branch (default main)',
    '  --path <dir>           definition directory inside the repository',
    '  --credentials-secret <name>  team secret with a token for a private https repository',
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    name: { type: 'string' },
    repository: { type: 'string' },
    branch: { type: 'string' },
    path: { type: 'string' },
    'credentials-secret': { type: 'string' },
    description: { type: 'string' },
  },
  async run(values, io) {
    const body: Record<string, unknown> = {};
    if (values.name) body.name = values.name;
    if (values.description) body.description = values.description;
    if (values.repository) {
      body.repository = {
        url: values.repository,
        ...(values.branch ? { branch: values.branch } : {}),
        ...(values.path ? { path: values.path } : {}),
        ...(values['credentials-secret']
          ? { credentials_secret: values['credentials-secret'] }
          : {}),
      };
    }
    printJson(io, await callApi(values, io, 'POST', '/factory', body));
  },
};

export const factoriesApplyCommand: CliCommand = {
  name: 'factories apply',
  synopsis: 'factories apply --factory <uid> --dir <directory>',
  summary:
    "Make a directory's files (factory.yaml, webhooks/, automations/, agents/ …) a managed factory's definition.",
  details: [
    '',
    'Every file is validated first; on any problem nothing changes and each problem is printed',
    'as file:line:column: reason. What applies but will not work yet (an automation naming a',
    'model that is not enabled) is printed to stderr as "warning: file:line:column: reason".',
    '',
    'Options:',
    '  --factory <uid>',
    '  --dir <directory>',
    ...API_OPTION_HELP,
  ],
  options: { ...API_OPTIONS, ...factoryOption, dir: { type: 'string' } },
  async run(values, io) {
    const dir = required(values, 'dir');
    const files = await readDefinitionDir(dir);
    const factory = (await callApi(
      values,
      io,
      'PUT',
      `/factory/${required(values, 'factory')}/definition`,
      { files },
    )) as {
      name: string;
      warnings?: { path: string; line: number; column: number; message: string }[];
    };
    io.out(`applied ${files.length} file(s) to factory "${factory.name}"`);
    for (const w of factory.warnings ?? []) {
      io.err(`warning: ${w.path}:${w.line}:${w.column}: ${w.message}`);
    }
  },
};

export const factoriesShowCommand: CliCommand = {
  name: 'factories show',
  synopsis: 'factories show --factory <uid> [--json]',
  summary: 'Show a factory, its definition source and last sync.',
  details: ['', 'Options:', '  --factory <uid>', JSON_OPTION_HELP, ...API_OPTION_HELP],
  options: { ...API_OPTIONS, ...JSON_OPTION, ...factoryOption },
  async run(values, io) {
    const answer = await callApi(values, io, 'GET', `/factory/${required(values, 'factory')}`);
    printAnswer(values, io, answer, () => printJson(io, answer));
  },
};

export const factoriesSyncCommand: CliCommand = {
  name: 'factories sync',
  synopsis: 'factories sync --factory <uid>',
  summary: "Apply a repository-backed factory's production branch now.",
  details: ['', 'Options:', '  --factory <uid>', ...API_OPTION_HELP],
  options: { ...API_OPTIONS, ...factoryOption },
  async run(values, io) {
    const factory = (await callApi(
      values,
      io,
      'POST',
      `/factory/${required(values, 'factory')}/sync`,
    )) as { definition_source: unknown };
    printJson(io, factory.definition_source);
  },
};

export const factoriesSetCredentialsCommand: CliCommand = {
  name: 'factories set-credentials',
  synopsis: 'factories set-credentials --factory <uid> (--secret <name> | --none)',
  summary: 'Set (or remove) the team secret a repository-backed factory reads its repository with.',
  details: [
    '',
    'The secret holds a token with read access to the repository (https). It is used from the',
    'next sync; `factories sync` runs one now.',
    '',
    'Options:',
    '  --factory <uid>',
    '  --secret <name>   name of the team secret',
    '  --none            read the repository without credentials',
    ...API_OPTION_HELP,
  ],
  options: {
    ...API_OPTIONS,
    ...factoryOption,
    secret: { type: 'string' },
    none: { type: 'boolean' },
  },
  async run(values, io) {
    if (Boolean(values.secret) === Boolean(values.none)) {
      throw new CommandError('give either --secret <name> or --none');
    }
    const factory = (await callApi(values, io, 'PATCH', `/factory/${required(values, 'factory')}`, {
      repository_credentials_secret: values.none ? null : values.secret,
    })) as { definition_source: { credentials_secret: string | null } };
    const name = factory.definition_source.credentials_secret;
    io.out(name ? `credentials: team secret "${name}"` : 'credentials: none');
  },
};

export const factoriesDeleteCommand: CliCommand = {
  name: 'factories delete',
  synopsis: 'factories delete --factory <uid>',
  summary: 'Delete a factory: its webhooks answer 404 from now on.',
  details: ['', 'Options:', '  --factory <uid>', ...API_OPTION_HELP],
  options: { ...API_OPTIONS, ...factoryOption },
  async run(values, io) {
    await callApi(values, io, 'DELETE', `/factory/${required(values, 'factory')}`);
    io.out('deleted');
  },
};

async function readDefinitionDir(dir: string): Promise<{ path: string; content: string }[]> {
  const files: { path: string; content: string }[] = [];
  const walk = async (path: string) => {
    const info = await stat(path);
    if (info.isDirectory()) {
      for (const name of (await readdir(path)).sort())
        if (!name.startsWith('.')) await walk(join(path, name));
    } else if (info.isFile()) {
      files.push({
        path: relative(dir, path).split('\\').join('/'),
        content: await readFile(path, 'utf8'),
      });
    }
  };
  await walk(dir).catch((err: Error) => {
    throw new CommandError(`cannot read ${dir}: ${err.message}`);
  });
  return files;
}

export const FACTORIES_COMMANDS = [
  factoriesListCommand,
  factoriesCreateCommand,
  factoriesApplyCommand,
  factoriesShowCommand,
  factoriesSyncCommand,
  factoriesSetCredentialsCommand,
  factoriesDeleteCommand,
];
