import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import { newUid } from '../../common/ids';
import { Team } from './team.entity';
import { User, UserRole, UserType } from './user.entity';

@Injectable()
export class TeamsService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  findByName(name: string): Promise<Team | null> {
    return this.dataSource.getRepository(Team).findOneBy({ name });
  }

  async createTeam(name: string): Promise<Team> {
    const team: Team = { id: newUid(), name, createdAt: new Date() };
    await this.dataSource.getRepository(Team).insert(team);
    return team;
  }

  async createUser(
    team: Team,
    fields: { displayName: string; email?: string | null; role?: UserRole; type?: UserType },
  ): Promise<User> {
    const user: User = {
      id: newUid(),
      teamId: team.id,
      displayName: fields.displayName,
      email: fields.email ?? null,
      type: fields.type ?? 'user',
      role: fields.role ?? 'member',
      createdAt: new Date(),
    };
    await this.dataSource.getRepository(User).insert(user);
    return user;
  }

  /** The team's first admin: the owner of keys made by the CLI and bootstrap. */
  async findAdmin(team: Team): Promise<User | null> {
    return this.dataSource.getRepository(User).findOne({
      where: { teamId: team.id, role: 'admin', type: 'user' },
      order: { createdAt: 'ASC' },
    });
  }

  async usersByIds(teamId: string, ids: string[]): Promise<Map<string, User>> {
    if (ids.length === 0) return new Map();
    const users = await this.dataSource
      .getRepository(User)
      .findBy({ teamId, id: In([...new Set(ids)]) });
    return new Map(users.map((u) => [u.id, u]));
  }
}
