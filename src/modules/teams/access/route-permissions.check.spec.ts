import { Controller, Get, Post } from '@nestjs/common';
import { Public } from '../../../common/auth/public.decorator';
import { RunScoped } from '../run-scoped.decorator';
import { RequirePermission } from '../../../common/auth/require-permission.decorator';
import { refusalOf, roleAllows, rolesWith } from '../../../common/auth/roles';
import { routesWithoutPermission } from './route-permissions.check';

@Controller('declared')
class Declared {
  @Get()
  @RequirePermission('runs.read')
  list() {}

  @Post()
  @Public()
  validate() {}

  helper() {}
}

@RunScoped()
@Controller('reports')
class Reports {
  @Post()
  report() {}
}

@Controller('forgotten')
class Forgotten {
  @Get()
  @RequirePermission('runs.read')
  list() {}

  @Post()
  create() {}
}

describe('routesWithoutPermission', () => {
  it('passes routes with a permission (on the method or the class) or @Public, and plain methods', () => {
    expect(routesWithoutPermission([Declared, Reports])).toEqual([]);
  });

  it('names a route that declares neither', () => {
    expect(routesWithoutPermission([Declared, Forgotten])).toEqual(['Forgotten.create']);
  });
});

describe('roles', () => {
  it('lets a viewer read, a member also run, and only an admin manage', () => {
    expect(rolesWith('runs.read')).toEqual(['admin', 'member', 'viewer']);
    expect(rolesWith('runs.create')).toEqual(['admin', 'member']);
    expect(rolesWith('webhooks.write')).toEqual(['admin']);
    expect(rolesWith('api_keys.read')).toEqual(['admin']);
    expect(roleAllows('viewer', 'secrets.read')).toBe(true);
    expect(roleAllows('member', 'secrets.write')).toBe(false);
  });

  it('refuses agent identity keys what only people may do, whatever their role', () => {
    const agent = { role: 'member' as const, userType: 'service_account' as const };
    expect(refusalOf(agent, 'runs.create')).toBeNull();
    expect(refusalOf(agent, 'agents.read')).toBe(
      `an agent identity's key lacks permission "agents.read": only human users can manage agents`,
    );
    expect(refusalOf({ role: 'viewer', userType: 'user' }, 'runs.cancel')).toBe(
      'role "viewer" lacks permission "runs.cancel" (held by: admin, member)',
    );
  });

  it('gives no role the run-scoped permission', () => {
    expect(rolesWith('runs.report')).toEqual([]);
  });
});
