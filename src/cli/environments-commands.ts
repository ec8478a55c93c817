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
import { CliCommand, OptionValues } from './cli-command';
import { UsageError } from './cli-errors';

const enc = encodeURIComponent;

const CONFIG_OPTIONS = {
  name: { type: 'string' },
  description: { type: 'string' },
  'docker-image': { type: 'string' },
  repos: { type: 'string' },
  'setup-commands-json': { type: 'string' },
  'retention-minutes': { type: 'string' },
  secrets: { type: 'string' },
  'providers-json': { type: 'string' },
} as const;

const CONFIG_HELP = [
  '  --name <name>                 environment name',
  '  --description <text>',
  '  --docker-image <image>        recorded with the environment',
  '  --repos owner/repo,...        repositories cloned into each run workspace',
  `  --setup-commands-json '[..]'  setup commands (a JSON array of strings), run in order`,
  '  --retention-minutes <1-60>    keep a failed setup workspace this long for a debug agent',
  '  --secrets NAME,...            team secrets given to runs as environment variables ("" = none)',
  `  --providers-json '{..}'       {"aws":{"role_arn"},"gcp":{..}}: stored only, no federation`,
];

/** The EnvironmentConfig fields the options set; the server validates them. */
function configBody(values: OptionValues): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (typeof values.name === 'string') body.name = values.name;
  if (typeof values.description === 'string') body.description = values.description;
  if (typeof values['docker-image'] === 'string') body.docker_image = values['docker-image'];
  if (typeof values.repos === 'string') {
    body.github_repos = values.repos
      .split(',')
      .filter((r) => r.trim())
      .map((r) => {
        const [owner, repo, extra] = r.trim().split('/');
        if (!owner || !repo || extra !== undefined) {
          throw new UsageError(`--repos: "${r}" is not owner/repo`);
        }
        return { owner, repo };
      });
  }
  const commands = values['setup-commands-json'];
  if (typeof commands === 'string') {
    try {
      body.setup_commands = JSON.parse(commands) as unknown;
    } catch {
      throw new UsageError('--setup-commands-json must be a JSON array of strings');
    }
  }
  if (typeof values.secrets === 'string') {
    body.secrets = values.secrets
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean)
      .map((name) => ({ name }));
  }
  const providers = values['providers-json'];
  if (typeof providers === 'string') {
    try {
      body.providers = JSON.parse(providers) as unknown;
    } catch {
      throw new UsageError('--providers-json must be a JSON object');
    }
  }
  const minutes = values['retention-minutes'];
  if (typeof minutes === 'string') body.failure_session_retention_minutes = Number(minutes);
  return body;
}

export const ENVIRONMENTS_COMMANDS: CliCommand[] = [
  {
    name: 'environments list',
    synopsis: 'environments list [--sort-by name|last_updated] [--json]',
    summary: 'List the environments the team owns or was granted.',
    details: [
      '',
      'Options:',
      '  --sort-by name|last_updated',
      JSON_OPTION_HELP,
      ...API_OPTION_HELP,
    ],
    options: { ...API_OPTIONS, ...JSON_OPTION, 'sort-by': { type: 'string' } },
    async run(values, io) {
      const sort =
        typeof values['sort-by'] === 'string' ? `?sort_by=${enc(values['sort-by'])}` : '';
      const answer = (await callApi(values, io, 'GET', `/agent/environments${sort}`)) as {
        environments: {
          uid: string;
          config: { name: string };
          setup_failed: boolean;
          access: string;
        }[];
      };
      printAnswer(values, io, answer, ({ environments }) => {
        for (const e of environments) {
          io.out(
            `${e.uid}  ${e.config.name}  (${e.access}${e.setup_failed ? ', setup failed' : ''})`,
          );
        }
        if (environments.length === 0) io.err('no environments');
      });
    },
  },
  {
    name: 'environments get',
    synopsis: 'environments get --uid <uid> [--json]',
    summary: 'Show an environment: its configuration, access and setup state.',
    details: ['', 'Options:', '  --uid <uid>', JSON_OPTION_HELP, ...API_OPTION_HELP],
    options: { ...API_OPTIONS, ...JSON_OPTION, uid: { type: 'string' } },
    async run(values, io) {
      const path = `/agent/environments/${enc(required(values, 'uid'))}`;
      const answer = await callApi(values, io, 'GET', path);
      printAnswer(values, io, answer, () => printJson(io, answer));
    },
  },
  {
    name: 'environments create',
    synopsis:
      'environments create --name <name> [--repos owner/repo,...] [--setup-commands-json ..]',
    summary: 'Create an environment.',
    details: ['', 'Options:', ...CONFIG_HELP, ...API_OPTION_HELP],
    options: { ...API_OPTIONS, ...CONFIG_OPTIONS },
    async run(values, io) {
      required(values, 'name');
      printJson(io, await callApi(values, io, 'POST', '/agent/environments', configBody(values)));
    },
  },
  {
    name: 'environments update',
    synopsis: 'environments update --uid <uid> [config options]',
    summary: 'Change an environment (only the options given).',
    details: ['', 'Options:', '  --uid <uid>', ...CONFIG_HELP, ...API_OPTION_HELP],
    options: { ...API_OPTIONS, ...CONFIG_OPTIONS, uid: { type: 'string' } },
    async run(values, io) {
      const path = `/agent/environments/${enc(required(values, 'uid'))}`;
      printJson(io, await callApi(values, io, 'PATCH', path, configBody(values)));
    },
  },
  {
    name: 'environments delete',
    synopsis: 'environments delete --uid <uid>',
    summary: 'Delete an environment.',
    details: ['', 'Options:', '  --uid <uid>', ...API_OPTION_HELP],
    options: { ...API_OPTIONS, uid: { type: 'string' } },
    async run(values, io) {
      const uid = required(values, 'uid');
      await callApi(values, io, 'DELETE', `/agent/environments/${enc(uid)}`);
      io.out(`deleted environment ${uid}`);
    },
  },
  {
    name: 'environments grant',
    synopsis: 'environments grant --uid <uid> --team <team uid> [--revoke]',
    summary:
      'Offer another team guest access to an environment (its admin accepts it), or take it back with --revoke.',
    details: [
      '',
      'Options:',
      '  --uid <uid>',
      '  --team <team uid>',
      '  --revoke',
      ...API_OPTION_HELP,
    ],
    options: {
      ...API_OPTIONS,
      uid: { type: 'string' },
      team: { type: 'string' },
      revoke: { type: 'boolean' },
    },
    async run(values, io) {
      const uid = enc(required(values, 'uid'));
      const team = required(values, 'team');
      if (values.revoke === true) {
        await callApi(values, io, 'DELETE', `/agent/environments/${uid}/grants/${enc(team)}`);
        io.out(`revoked access of team ${team}`);
      } else {
        await callApi(values, io, 'POST', `/agent/environments/${uid}/grants`, { team_id: team });
        io.out(`offered to team ${team}; an admin of that team accepts it`);
      }
    },
  },
  {
    name: 'environments share',
    synopsis: 'environments share --uid <uid>',
    summary: 'Create a share token (replacing the previous one) another team can accept.',
    details: ['', 'Options:', '  --uid <uid>', ...API_OPTION_HELP],
    options: { ...API_OPTIONS, uid: { type: 'string' } },
    async run(values, io) {
      const path = `/agent/environments/${enc(required(values, 'uid'))}/share-link`;
      const { share_token } = (await callApi(values, io, 'POST', path)) as { share_token: string };
      io.out(share_token);
    },
  },
  {
    name: 'environments pending',
    synopsis: 'environments pending [--json]',
    summary: "List environments offered to the caller's team that await an admin's acceptance.",
    details: ['', 'Options:', JSON_OPTION_HELP, ...API_OPTION_HELP],
    options: { ...API_OPTIONS, ...JSON_OPTION },
    async run(values, io) {
      const answer = await callApi(values, io, 'GET', '/agent/environments/pending');
      printAnswer(values, io, answer, () => printJson(io, answer));
    },
  },
  {
    name: 'environments accept',
    synopsis: 'environments accept (--token <share token> | --uid <uid> --version <n>)',
    summary:
      "Accept a shared environment for the caller's team (admin): a share token, or a version " +
      'of an offered one as `environments pending` shows it.',
    details: [
      '',
      'Options:',
      '  --token <share token>   redeem a share link (accepts its current version)',
      '  --uid <uid>             an environment offered to the team',
      '  --version <n>           the version reviewed',
      ...API_OPTION_HELP,
    ],
    options: {
      ...API_OPTIONS,
      token: { type: 'string' },
      uid: { type: 'string' },
      version: { type: 'string' },
    },
    async run(values, io) {
      if (typeof values.token === 'string') {
        const path = `/agent/environments/shared/${enc(values.token)}/accept`;
        printJson(io, await callApi(values, io, 'POST', path));
        return;
      }
      const uid = required(values, 'uid');
      const version = Number(required(values, 'version'));
      if (!Number.isInteger(version) || version < 1) {
        throw new UsageError('--version must be a positive integer');
      }
      const path = `/agent/environments/${enc(uid)}/accept`;
      printJson(io, await callApi(values, io, 'POST', path, { version }));
    },
  },
  {
    name: 'environments decline',
    synopsis: 'environments decline --uid <uid>',
    summary:
      "Decline an offered environment, or leave a shared one (admin): the team's grant ends.",
    details: ['', 'Options:', '  --uid <uid>', ...API_OPTION_HELP],
    options: { ...API_OPTIONS, uid: { type: 'string' } },
    async run(values, io) {
      const uid = required(values, 'uid');
      await callApi(values, io, 'POST', `/agent/environments/${enc(uid)}/decline`);
      io.out(`declined environment ${uid}`);
    },
  },
];
