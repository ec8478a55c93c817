import type { Team } from '../modules/teams/team.entity';
import type { TeamsService } from '../modules/teams/teams.service';
import type { User } from '../modules/teams/user.entity';
import { CliCommand, requiredText } from './cli-command';
import type { CliServices } from './cli-context';
import { withServices } from './cli-context';
import { CommandError } from './cli-errors';

export const teamsCreateCommand: CliCommand = {
  name: 'teams create',
  synopsis: 'teams create --name <name>',
  summary: 'Create a team with an admin user and print the team id.',
  details: ['', 'Options:', '  --name <name>   team name, unique, at most 128 characters'],
  options: { name: { type: 'string' } },
  async run(values, io) {
    const name = requiredText(values, 'name');
    const team = await withServices(io.config(), async ({ teams, audited }) => {
      const existing = await teams.findByName(name);
      if (existing) throw new CommandError(`team "${name}" already exists (id ${existing.id})`);
      return (await createTeamWithAdmin(teams, name, audited)).team;
    });
    io.err(`created team "${team.name}" with an admin user`);
    io.out(team.id);
  },
};

/** A new team and its admin user, recorded as `team.create` in the new team's audit log. */
export async function createTeamWithAdmin(
  teams: TeamsService,
  name: string,
  audited: CliServices['audited'],
): Promise<{ team: Team; admin: User }> {
  return audited(async (manager) => {
    const team = await teams.createTeam(name, manager);
    const admin = await teams.createUser(team, { displayName: 'Admin', role: 'admin' }, manager);
    const target = { type: 'team', id: team.id };
    const details = { name, admin_user_id: admin.id };
    return {
      result: { team, admin },
      event: { teamId: team.id, action: 'team.create', target, details },
    };
  });
}
