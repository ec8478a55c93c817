import { mapClaim, mappedTeams, parseRoleMapping } from './role-mapping';

describe('AMBIENT_OIDC_ROLE_MAPPING', () => {
  const mapping = parseRoleMapping(
    'ambient-acme-admins=acme:admin, ambient-acme=acme:member,,ou=x=ops:team:viewer',
  );

  it('reads value=team:role entries, splitting at the last "=" and the last ":"', () => {
    expect(mapping).toEqual([
      { value: 'ambient-acme-admins', team: 'acme', role: 'admin' },
      { value: 'ambient-acme', team: 'acme', role: 'member' },
      { value: 'ou=x', team: 'ops:team', role: 'viewer' },
    ]);
    expect(mappedTeams(mapping)).toEqual(['acme', 'ops:team']);
  });

  it('refuses an unreadable entry or an unknown role, naming the entry', () => {
    expect(() => parseRoleMapping('ambient-acme')).toThrow(
      'entry "ambient-acme" is not <claim value>=<team>:<role>',
    );
    expect(() => parseRoleMapping('g=acme:owner')).toThrow(
      'entry "g=acme:owner": role must be one of admin, member, viewer',
    );
    expect(() => parseRoleMapping('=acme:admin')).toThrow('is not <claim value>=<team>:<role>');
    expect(() => parseRoleMapping(' , ')).toThrow('names no claim value');
  });

  it('maps a list or a single value; the first matching team wins with its strongest role', () => {
    expect(mapClaim(mapping, ['ambient-acme', 'other'])).toEqual({ team: 'acme', role: 'member' });
    expect(mapClaim(mapping, ['ambient-acme', 'ambient-acme-admins'])).toEqual({
      team: 'acme',
      role: 'admin',
    });
    expect(mapClaim(mapping, 'ou=x')).toEqual({ team: 'ops:team', role: 'viewer' });
    expect(mapClaim(mapping, ['ou=x', 'ambient-acme'])).toEqual({ team: 'acme', role: 'member' });
    expect(mapClaim(mapping, ['unrelated'])).toBeNull();
    expect(mapClaim(mapping, undefined)).toBeNull();
    expect(mapClaim(mapping, [42, null])).toBeNull();
  });
});
