import { activeOfPatch, activeOfPut, pageOf, ScimError, userNameOfFilter } from './scim-resources';

const refusal = (f: () => unknown): ScimError => {
  try {
    f();
  } catch (err) {
    if (err instanceof ScimError) return err;
    throw err;
  }
  throw new Error('not refused');
};

describe('SCIM requests', () => {
  it('reads `userName eq "…"` filters as Okta and Entra send them, and refuses any other', () => {
    expect(userNameOfFilter(undefined)).toBeUndefined();
    expect(userNameOfFilter('userName eq "Ada@Example.com"')).toBe('ada@example.com');
    expect(userNameOfFilter('username EQ "a\\"b@x"')).toBe('a"b@x');
    for (const filter of [
      'emails co "x"',
      'userName eq x',
      'userName eq "a" and active eq true',
      7,
    ]) {
      expect(refusal(() => userNameOfFilter(filter))).toMatchObject({
        status: 400,
        scimType: 'invalidFilter',
      });
    }
  });

  it('reads `active` from a PATCH in Okta, Entra and path-less forms; other attributes untouched', () => {
    expect(activeOfPatch({ Operations: [{ op: 'replace', value: { active: false } }] })).toBe(
      false,
    );
    expect(activeOfPatch({ Operations: [{ op: 'Replace', path: 'active', value: 'False' }] })).toBe(
      false,
    );
    expect(activeOfPatch({ Operations: [{ op: 'add', path: 'Active', value: true }] })).toBe(true);
    expect(
      activeOfPatch({ Operations: [{ op: 'replace', path: 'displayName', value: 'Ada' }] }),
    ).toBeUndefined();
  });

  it.each([
    [{}, 'Operations', 'invalidSyntax'],
    [{ Operations: [] }, 'Operations', 'invalidSyntax'],
    [{ Operations: [{ op: 'move' }] }, 'Operations[0].op', 'invalidSyntax'],
    [{ Operations: [{ op: 'remove', path: 'active' }] }, 'Operations[0]', 'mutability'],
    [
      { Operations: [{ op: 'replace', path: 'active', value: 0 }] },
      'Operations[0].value',
      'invalidValue',
    ],
    [{ Operations: [{ op: 'replace', value: 'x' }] }, 'Operations[0].value', 'invalidSyntax'],
  ])('refuses the PATCH %j naming %s', (body, field, scimType) => {
    const error = refusal(() => activeOfPatch(body));
    expect(error).toMatchObject({ status: 400, scimType });
    expect(error.detail.startsWith(`${field}`)).toBe(true);
  });

  it('reads `active` of a PUT, and bounds list pages', () => {
    expect(activeOfPut({ userName: 'a', active: false })).toBe(false);
    expect(activeOfPut({ userName: 'a' })).toBeUndefined();
    expect(refusal(() => activeOfPut([]))).toMatchObject({ status: 400 });
    expect(pageOf(undefined, undefined)).toEqual({ start: 1, count: 100 });
    expect(pageOf('0', '500')).toEqual({ start: 1, count: 100 });
    expect(pageOf('3', '-1')).toEqual({ start: 3, count: 0 });
    expect(refusal(() => pageOf('x', undefined)).detail).toMatch(/^startIndex/);
  });
});
