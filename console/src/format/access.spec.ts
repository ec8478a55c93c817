import { refusalText } from './access';

describe('console role refusals', () => {
  it('says before any form is filled why a role may not act, and which roles may', () => {
    const viewer = { role: 'viewer', type: 'api_key' } as const;
    expect(refusalText(viewer, 'runs.create', 'start runs')).toBe(
      'You are signed in as a viewer, and a viewer may not start runs. That takes the admin or member role: ask a team admin for a key with it.',
    );
    expect(refusalText({ role: 'member', type: 'user' }, 'agents.write', 'create identities')).toBe(
      'You are signed in as a member, and a member may not create identities. That takes the admin role: ask a team admin for a key with it.',
    );
  });

  it('lets a role do what it holds, and waits for the caller before refusing anything', () => {
    expect(
      refusalText({ role: 'member', type: 'api_key' }, 'runs.create', 'start runs'),
    ).toBeNull();
    expect(refusalText(undefined, 'runs.create', 'start runs')).toBeNull();
  });

  it("refuses an agent identity's key what only people may do, whatever its role", () => {
    expect(
      refusalText({ role: 'member', type: 'agent' }, 'agents.write', 'create identities'),
    ).toBe(
      "You are signed in with an agent identity's key, which may not create identities: only people may.",
    );
    expect(refusalText({ role: 'member', type: 'agent' }, 'runs.create', 'start runs')).toBeNull();
  });
});
