import { api, ApiError, data, type Schemas } from './client';

export type Approval = Schemas['RunApproval'];
export type InboxItem = Schemas['ApprovalInboxItem'];
export type Decision = NonNullable<Approval['decision']>;

/** The inbox's pending count is read at most this many at a time ("200+" beyond). */
export const PENDING_COUNT_LIMIT = 200;

/**
 * A decision the console sent, or one someone else made first (409): then `conflict` carries the
 * server's words (who decided, when) and `approval` is the request as it is now.
 */
export type DecideOutcome =
  | { kind: 'decided'; approval: Approval; runState: string }
  | { kind: 'conflict'; approval?: Approval; conflict: string };

const listeners = new Set<() => void>();

/** Called whenever this console decided a request (the nav's pending count re-reads). */
export function onApprovalsChanged(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function runApprovals(runId: string): Promise<Approval[]> {
  return data(api.GET('/agent/runs/{runId}/approvals', { params: { path: { runId } } })).then(
    (answer) => answer.approvals,
  );
}

export async function decideApproval(
  approval: Pick<Approval, 'id' | 'run_id'>,
  decision: Decision,
  comment: string,
): Promise<DecideOutcome> {
  const trimmed = comment.trim();
  try {
    const answer = await data(
      api.POST('/agent/runs/{runId}/approvals/{approvalId}', {
        params: { path: { runId: approval.run_id, approvalId: approval.id } },
        body: { decision, ...(trimmed ? { comment: trimmed } : {}) },
      }),
    );
    return { kind: 'decided', approval: answer.approval, runState: answer.run_state };
  } catch (failure) {
    if (!(failure instanceof ApiError) || failure.status !== 409) throw failure;
    const now = await runApprovals(approval.run_id).catch(() => []);
    return {
      kind: 'conflict',
      approval: now.find((item) => item.id === approval.id),
      conflict: failure.message,
    };
  } finally {
    listeners.forEach((listener) => listener());
  }
}
