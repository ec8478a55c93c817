import type { TeamsService } from '../modules/teams/teams.service';
import type { User } from '../modules/teams/user.entity';
import { formatTime, keyTable } from './api-keys-commands';
import { CliCommand, optionalText, requiredText } from './cli-command';
import { withServices } from './cli-context';
import { CommandError } from './cli-errors';

const DEFAULT_KEY_NAME = 'cli';

const IDENTITY_OPTION =
  '  --identity <uid>  the agent identity (its uid, as GET /agent/identities shows it)';

export const identityKeysCreateCommand: CliCommand = {
  name: 'identity-keys create',
  synopsis: 'identity-keys create --identity <uid> [--name <label>]',
  summary: 'Create an API key for an agent identity: requests made with it act as the agent.',
  details: [
    '',
    'Options:',
    IDENTITY_OPTION,
    `  --name <label>    a label to recognise the key by (default "${DEFAULT_KEY_NAME}")`,
    '',
    'The key is printed once, alone on the last line of stdout; only its hash is stored.',
    'Deleting the identity deletes its keys.',
  ],
  options: { identity: { type: 'string' }, name: { type: 'string' } },
  async run(values, io) {
    const uid = requiredText(values, 'identity', 64);
    const label = optionalText(values, 'name') ?? DEFAULT_KEY_NAME;
    const { agent, key, id } = await withServices(
      io.config(),
      async ({ teams, apiKeys, audited }) => {
        const agent = await identity(teams, uid);
        const made = await audited(async (manager) => {
          const result = await apiKeys.create(agent, label, { manager });
          const target = { type: 'api_key', id: result.id };
          const details = { name: label, agent_uid: uid };
          return {
            result,
            event: { teamId: agent.teamId, action: 'api_key.create', target, details },
          };
        });
        return { agent, ...made };
      },
    );
    io.err(
      `created API key "${label}" (id ${id}) for agent "${agent.displayName}". ` +
        'It is shown only once; store it now:',
    );
    io.out(key);
  },
};

export const identityKeysListCommand: CliCommand = {
  name: 'identity-keys list',
  synopsis: 'identity-keys list --identity <uid> [--json]',
  summary: "List an agent identity's API keys: id, name, prefix, created, last used, revoked.",
  details: [
    '',
    'Options:',
    IDENTITY_OPTION,
    '  --json             {"api_keys":[…]} as GET /agent/identities/{uid}/api-keys answers it',
  ],
  options: { identity: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, io) {
    const uid = requiredText(values, 'identity', 64);
    const keys = await withServices(io.config(), async ({ teams, apiKeys }) => {
      await identity(teams, uid);
      return apiKeys.listForUser(uid);
    });
    if (values.json === true) {
      // Loaded here: the API's mapper module brings modules other commands never need.
      const { toIdentityApiKey } = await import('../modules/identities/agent-response.mapper');
      io.out(JSON.stringify({ api_keys: keys.map(toIdentityApiKey) }));
      return;
    }
    if (keys.length === 0) {
      io.err(`agent "${uid}" has no API keys`);
      return;
    }
    for (const line of keyTable(keys)) io.out(line);
  },
};

export const identityKeysRevokeCommand: CliCommand = {
  name: 'identity-keys revoke',
  synopsis: 'identity-keys revoke --identity <uid> --id <key id>',
  summary: "Revoke one of an agent identity's keys: requests using it fail from now on.",
  details: ['', 'Options:', IDENTITY_OPTION, '  --id <id>         the key id, as "list" shows it'],
  options: { identity: { type: 'string' }, id: { type: 'string' } },
  async run(values, io) {
    const uid = requiredText(values, 'identity', 64);
    const id = requiredText(values, 'id', 64);
    const key = await withServices(io.config(), async ({ teams, apiKeys, audited }) => {
      const agent = await identity(teams, uid);
      return audited(async (manager) => {
        const result = await apiKeys.revokeForUser(uid, id, manager);
        if (!result) throw new CommandError(`agent "${uid}" has no API key with id "${id}"`);
        const target = { type: 'api_key', id };
        const details = { name: result.name, agent_uid: uid };
        return {
          result,
          event: { teamId: agent.teamId, action: 'api_key.revoke', target, details },
        };
      });
    });
    io.out(`revoked API key "${key.name}" (id ${key.id}) at ${formatTime(key.revokedAt)}`);
  },
};

async function identity(teams: TeamsService, uid: string): Promise<User> {
  const agent = await teams.findServiceAccount(uid);
  if (!agent) throw new CommandError(`no agent identity with uid "${uid}"`);
  return agent;
}
