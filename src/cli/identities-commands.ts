import type { Team } from '../modules/teams/team.entity';
import type { TeamsService } from '../modules/teams/teams.service';
import { formatTime } from './api-keys-commands';
import { CliCommand, requiredText } from './cli-command';
import { withServices } from './cli-context';
import { CommandError, UsageError } from './cli-errors';

export const identitiesListCommand: CliCommand = {
  name: 'identities list',
  synopsis: 'identities list --team <name> [--json]',
  summary: "List a team's agent identities, oldest first, and whether each is within the limit.",
  details: [
    '',
    'Options:',
    '  --team <name>   the team whose agents to list',
    '  --json          {"limit","agents":[{"uid","name","available","created_at"}]} on one line',
  ],
  options: { team: { type: 'string' }, json: { type: 'boolean' } },
  async run(values, io) {
    const teamName = requiredText(values, 'team');
    const defaultLimit = io.config().identities.defaultAgentLimit;
    const { agents, limit, own } = await withServices(io.config(), async ({ teams }) => {
      const team = await existingTeam(teams, teamName);
      const own = await teams.agentLimit(team.id);
      return { agents: await teams.serviceAccounts(team.id), limit: own ?? defaultLimit, own };
    });
    if (values.json === true) {
      const rows = agents.map((a, i) => ({
        uid: a.id,
        name: a.displayName,
        available: i < limit,
        created_at: a.createdAt.toISOString(),
      }));
      io.out(JSON.stringify({ limit, agents: rows }));
      return;
    }
    io.err(
      `team "${teamName}" may use ${limit} agent identit${limit === 1 ? 'y' : 'ies'} ` +
        `(${own === null ? 'the default, AMBIENT_TEAM_AGENT_LIMIT' : 'its own limit'})`,
    );
    if (agents.length === 0) {
      io.err(`team "${teamName}" has no agent identities`);
      return;
    }
    const rows = agents.map((a, i) => [
      a.id,
      a.displayName,
      i < limit ? 'yes' : 'no',
      formatTime(a.createdAt),
    ]);
    const header = ['UID', 'NAME', 'AVAILABLE', 'CREATED'];
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
    for (const cells of [header, ...rows]) {
      io.out(
        cells
          .map((cell, i) => cell.padEnd(widths[i]))
          .join('  ')
          .trimEnd(),
      );
    }
  },
};

export const identitiesSetLimitCommand: CliCommand = {
  name: 'identities set-limit',
  synopsis: 'identities set-limit --team <name> --limit <count|default>',
  summary: 'Set how many agent identities a team may use (its plan limit); the oldest count first.',
  details: [
    '',
    'Options:',
    '  --team <name>             the team',
    '  --limit <count|default>   0 or more, or "default" to follow AMBIENT_TEAM_AGENT_LIMIT',
    '',
    'Agents beyond the limit stay listed with available=false and cannot execute runs.',
  ],
  options: { team: { type: 'string' }, limit: { type: 'string' } },
  async run(values, io) {
    const teamName = requiredText(values, 'team');
    const text = requiredText(values, 'limit', 16);
    const limit = text === 'default' ? null : Number(text);
    if (limit !== null && !(Number.isInteger(limit) && limit >= 0 && limit <= 1_000_000)) {
      throw new UsageError('--limit must be a whole number of at least 0, or "default"');
    }
    await withServices(io.config(), async ({ teams, audited }) => {
      const team = await existingTeam(teams, teamName);
      await audited(async (manager) => {
        await teams.setAgentLimit(team.id, limit, manager);
        const target = { type: 'team', id: team.id };
        const details = { agent_limit: limit };
        return {
          result: null,
          event: { teamId: team.id, action: 'limits.update', target, details },
        };
      });
    });
    io.out(
      limit === null
        ? `team "${teamName}" now follows the default agent limit (${io.config().identities.defaultAgentLimit})`
        : `team "${teamName}" may now use ${limit} agent identit${limit === 1 ? 'y' : 'ies'}`,
    );
  },
};

async function existingTeam(teams: TeamsService, name: string): Promise<Team> {
  const team = await teams.findByName(name);
  if (!team) throw new CommandError(`team "${name}" does not exist`);
  return team;
}
