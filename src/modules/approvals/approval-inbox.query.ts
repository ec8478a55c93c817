import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { encodeKeysetCursor } from '../../common/keyset-cursor';
import { RunApproval, RunApprovalRepository, RunLookupRepository } from '../runs';
import type { InboxParams } from './approval-inbox.params';

/** What the inbox shows of a request's run. */
export interface InboxRun {
  id: string;
  title: string;
  state: string;
  executorId: string | null;
}

/**
 * The team's requests across its runs, newest first: `pending` (undecided), `decided` or `all`.
 * Keyset pages over (requested_at, id) on the (team_id, decision, requested_at) index.
 */
@Injectable()
export class ApprovalInboxQuery {
  constructor(
    private readonly approvals: RunApprovalRepository,
    private readonly runs: RunLookupRepository,
  ) {}

  async page(
    teamId: string,
    params: InboxParams,
  ): Promise<{ requests: RunApproval[]; runs: Map<string, InboxRun>; nextCursor: string | null }> {
    if (params.after && !/^[A-Za-z0-9-]{1,36}$/.test(params.after.id)) {
      throw ApiError.invalid('cursor', 'is not a cursor this list returned');
    }
    const rows = await this.approvals.teamRequests(
      teamId,
      params.state,
      params.after,
      params.limit + 1,
    );
    const requests = rows.slice(0, params.limit);
    const last = requests.at(-1);
    return {
      requests,
      runs: await this.runsOf(requests),
      nextCursor:
        rows.length > params.limit && last
          ? encodeKeysetCursor({ state: params.state }, { at: last.requestedAt, id: last.id })
          : null,
    };
  }

  private async runsOf(requests: RunApproval[]): Promise<Map<string, InboxRun>> {
    const ids = [...new Set(requests.map((r) => r.runId))];
    if (ids.length === 0) return new Map();
    const rows = await this.runs.summaries(ids);
    return new Map(rows.map((r) => [r.id, r]));
  }
}
