import { ApproverError, namesApprover, parseApprovers } from './agent-approvers';

describe('agent approvers', () => {
  const ID = 'Uk2H5XrM1oN8Jw0bq4Vd7a';

  it('keeps user ids, lower-cases e-mails and drops duplicates', () => {
    expect(parseApprovers([' Lead@Example.com', ID, 'lead@example.com'])).toEqual([
      'lead@example.com',
      ID,
    ]);
  });

  it('names the entry that is neither a user id nor an e-mail', () => {
    expect(() => parseApprovers(['lead@example.com', 'Lea'])).toThrow(
      new ApproverError('approvers.1: must be a user id (22 characters) or an e-mail address'),
    );
    expect(() => parseApprovers('lead@example.com')).toThrow(/^approvers: must be a list/);
    expect(() => parseApprovers(Array.from({ length: 51 }, () => ID))).toThrow(/at most 50/);
  });

  it('recognises a person by id or by e-mail, without case', () => {
    const approvers = ['lead@example.com', ID];
    expect(namesApprover(approvers, { userId: 'other', email: 'LEAD@example.com' })).toBe(true);
    expect(namesApprover(approvers, { userId: ID, email: null })).toBe(true);
    expect(namesApprover(approvers, { userId: 'other', email: 'max@example.com' })).toBe(false);
    expect(namesApprover(approvers, { userId: 'other', email: null })).toBe(false);
  });
});
