import { isTeamRole, TEAM_ROLES, TeamRole } from '../common/auth/roles';
import type { ApiKey } from '../modules/teams/api-key.entity';
import type { Team } from '../modules/teams/team.entity';
import type { TeamsService } from '../modules/teams/teams.service';
import { CliCommand, optionalText, requiredText } from './cli-command';
import { withServices } from './cli-context';
import { CommandError } from './cli-errors';
import { createTeamWithAdmin } from './teams-commands';

const DEFAULT_KEY_NAME = 'cli';

export const apiKeysCreateCommand: CliCommand = {
  name: 'api-keys create',
  synopsis:
    'api-keys create --team <name> [--role admin|member|viewer] [--name <label>] [--create-team]',
  summary: "Create an API key for the team's admin user, with a role (default admin).",
  details: [
    '',
    'Options:',
    '  --team <name>    the team that owns the key',
    `  --name <label>   a label to recognise the key by (default "${DEFAULT_KEY_NAME}")`,
    `  --role <role>    what the key may do: ${TEAM_ROLES.join(', ')} (default admin; see docs/teams-and-access.md "Roles")`,
    '  --create-team    create the team and its admin first when the team does not exist',
    '',
    'The key is printed once, alone on the last line of stdout (so scripts can capture it);',
    'only its hash is stored.',
  ],
  options: {
    team: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string' },
    'create-team': { type: 'boolean' },
  },
  async run(values, io) {
    const teamName = requiredText(values, 'team');
    const label = optionalText(values, 'name') ?? DEFAULT_KEY_NAME;
    const role = roleOption(optionalText(values, 'role'));
    const createTeam = values['create-team'] === true;
    const { team, created, id, key } = await withServices(
      io.config(),
      async ({ teams, apiKeys, audited }) => {
        const existing = await teams.findByName(teamName);
        if (!existing && !createTeam) throw missingTeam(teamName, true);
        const { team, admin } = existing
          ? { team: existing, admin: await adminOf(teams, existing) }
          : await createTeamWithAdmin(teams, teamName, audited);
        const made = await audited(async (manager) => {
          const result = await apiKeys.create(admin, label, { role, manager });
          const target = { type: 'api_key', id: result.id };
          const details = { name: label, role, user_id: admin.id };
          return { result, event: { teamId: team.id, action: 'api_key.create', target, details } };
        });
        return { team, created: !existing, ...made };
      },
    );
    if (created) io.err(`created team "${team.name}" (id ${team.id}) with an admin user`);
    io.err(
      `created API key "${label}" (id ${id}) with role ${role} for team "${team.name}". ` +
        'It is shown only once; store it now:',
    );
    io.out(key);
  },
};

export const apiKeysListCommand: CliCommand = {
  name: 'api-keys list',
  synopsis: 'api-keys list --team <name> [--json]',
  summary:
    "List a team's API keys: id, name, role, prefix, created, last used, revoked. Never the secret.",
  details: [
    '',
    'Options:',
    '  --team <name>   the team whose keys to list',
    '  --json          {"api_keys":[…]} as GET /api-keys answers it (every key of the team)',
  ],
  options: { team: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, io) {
    const teamName = requiredText(values, 'team');
    const keys = await withServices(io.config(), async ({ teams, apiKeys }) => {
      const team = await teams.findByName(teamName);
      if (!team) throw missingTeam(teamName, false);
      return apiKeys.listKeys(team.id);
    });
    if (values.json === true) {
      // Loaded here: the API's DTO module brings its decorators, which other commands never need.
      const { toApiKeyDto } = await import('../modules/teams/http/api-key.dto');
      io.out(JSON.stringify({ api_keys: keys.map(toApiKeyDto) }));
      return;
    }
    if (keys.length === 0) {
      io.err(`team "${teamName}" has no API keys`);
      return;
    }
    for (const line of keyTable(keys)) io.out(line);
  },
};

export const apiKeysRevokeCommand: CliCommand = {
  name: 'api-keys revoke',
  synopsis: 'api-keys revoke --id <id>',
  summary: 'Revoke an API key: requests using it fail from now on. Revoking twice is harmless.',
  details: ['', 'Options:', '  --id <id>   the key id, as "api-keys list" shows it'],
  options: { id: { type: 'string' } },
  async run(values, io) {
    const id = requiredText(values, 'id', 64);
    const key = await withServices(io.config(), ({ apiKeys, audited }) =>
      audited(async (manager) => {
        const result = await apiKeys.revoke(id, manager);
        if (!result) throw new CommandError(`no API key with id "${id}"`);
        const target = { type: 'api_key', id };
        const event = { teamId: result.teamId, action: 'api_key.revoke', target };
        return { result, event: { ...event, details: { name: result.name } } };
      }),
    );
    if (!key) throw new CommandError(`no API key with id "${id}"`);
    io.out(`revoked API key "${key.name}" (id ${key.id}) at ${formatTime(key.revokedAt)}`);
  },
};

function roleOption(value: string | null): TeamRole {
  if (value === null) return 'admin';
  if (!isTeamRole(value)) {
    throw new CommandError(`--role: must be one of ${TEAM_ROLES.join(', ')} (got "${value}")`);
  }
  return value;
}

/** The team's admin; a team made before its admin existed (or whose admin was removed) gets one. */
async function adminOf(teams: TeamsService, team: Team) {
  return (
    (await teams.findAdmin(team)) ??
    (await teams.createUser(team, { displayName: 'Admin', role: 'admin' }))
  );
}

function missingTeam(name: string, canCreate: boolean): CommandError {
  const hint = `create it with "teams create --name ${name}"${canCreate ? ' or pass --create-team' : ''}`;
  return new CommandError(`team "${name}" does not exist (${hint})`);
}

export function keyTable(keys: ApiKey[]): string[] {
  const header = ['ID', 'NAME', 'ROLE', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED'];
  const rows = keys.map((k) => [
    k.id,
    k.name,
    k.role ?? '-',
    k.prefix,
    formatTime(k.createdAt),
    formatTime(k.lastUsedAt, 'never'),
    formatTime(k.revokedAt, 'no'),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((cells) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}

export function formatTime(date: Date | null, none = '-'): string {
  return date ? date.toISOString().replace(/\.\d{3}Z$/, 'Z') : none;
}
