import { useEffect } from 'react';
import { api, data } from '../api/client';
import { onApprovalsChanged, PENDING_COUNT_LIMIT } from '../api/approvals';
import { useInterval, useLoad } from './ui';

const REFRESH_MS = 15_000;

/** The nav's count of requests waiting for a person (none shown when nothing waits). */
export function PendingApprovalsBadge() {
  const pending = useLoad(
    () =>
      data(
        api.GET('/agent/approvals', {
          params: { query: { state: 'pending', limit: PENDING_COUNT_LIMIT } },
        }),
      ),
    [],
  );
  useInterval(pending.reload, REFRESH_MS);
  useEffect(() => onApprovalsChanged(pending.reload), []);
  const count = pending.value?.approvals.length ?? 0;
  if (count === 0) return null;
  const text = pending.value?.page_info.has_next_page ? `${count}+` : String(count);
  return (
    <span className="count-badge" data-testid="pending-approvals">
      {text}
      <span className="visually-hidden"> pending</span>
    </span>
  );
}
