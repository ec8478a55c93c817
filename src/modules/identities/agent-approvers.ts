import type { ValidationOptions } from 'class-validator';
import { parsedBy } from '../run-config';

export const MAX_APPROVERS = 50;
const USER_ID = /^[A-Za-z0-9]{22}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** An `approvers` entry that cannot be accepted; the message names it (`approvers.1: …`). */
export class ApproverError extends Error {}

/**
 * Who may decide the approval requests of an agent identity's runs (team admins always may):
 * user ids (22 characters) or e-mail addresses, compared without case. Returns them normalised
 * (e-mails lower-cased, duplicates dropped).
 */
export function parseApprovers(input: unknown, field = 'approvers'): string[] {
  if (!Array.isArray(input))
    throw new ApproverError(`${field}: must be a list of user ids or e-mails`);
  if (input.length > MAX_APPROVERS) {
    throw new ApproverError(`${field}: at most ${MAX_APPROVERS} approvers are allowed`);
  }
  const approvers = input.map((entry, index) => {
    if (typeof entry === 'string' && USER_ID.test(entry)) return entry;
    if (typeof entry === 'string' && EMAIL.test(entry.trim())) return entry.trim().toLowerCase();
    throw new ApproverError(
      `${field}.${index}: must be a user id (22 characters) or an e-mail address`,
    );
  });
  return [...new Set(approvers)];
}

/** `approvers`: a list `parseApprovers` accepts. */
export function IsApprovers(options?: ValidationOptions): PropertyDecorator {
  return parsedBy('approvers', parseApprovers, ApproverError, options);
}

/** Whether a person is named by a list of approvers (by user id or by e-mail). */
export function namesApprover(
  approvers: readonly string[],
  person: { userId: string; email: string | null },
): boolean {
  const email = person.email?.toLowerCase();
  return approvers.some((entry) => entry === person.userId || (!!email && entry === email));
}
