import type { UserRole, UserType } from './user.entity';

/** Who is calling: resolved from the API key by the bearer strategy, attached to the request. */
export interface Principal {
  teamId: string;
  userId: string;
  keyId: string;
  userType: UserType;
  role: UserRole;
  displayName: string;
  email: string | null;
  /** Set for a run-scoped key: the run (and its execution) the key may act on, nothing else. */
  runId?: string | null;
  runExecutionId?: number | null;
}
