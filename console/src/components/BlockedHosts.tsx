import { useState } from 'react';
import { api, data, type Schemas } from '../api/client';
import { blockedHostsOf, ruleFor, type BlockedHost } from '../egress';
import { DataTable, type Column } from './table';
import { ErrorMessage, useLoad } from './ui';

const COLUMNS: Column<BlockedHost>[] = [
  { key: 'host', header: 'Host', cell: (row) => <code>{row.host}</code> },
  { key: 'port', header: 'Port', cell: (row) => row.port },
  { key: 'method', header: 'Method', cell: (row) => row.method ?? '—' },
  { key: 'reason', header: 'Reason', cell: (row) => row.reason || '—' },
  { key: 'count', header: 'Count', cell: (row) => row.count },
];

/**
 * The hosts the run's sandbox was refused (`egress_denied` events); an admin adds one to the
 * run's environment's `egress_allow` with one click. Nothing is shown for a run refused nothing.
 */
export function BlockedHosts({
  events,
  environmentId,
}: {
  events: Schemas['TimelineEvent'][];
  environmentId: string | undefined;
}) {
  const me = useLoad(() => data(api.GET('/me')), []);
  const [allowed, setAllowed] = useState<Record<string, 'added' | 'listed'>>({});
  const [error, setError] = useState<unknown>();
  const rows = blockedHostsOf(events);
  if (rows.length === 0) return null;
  const isAdmin = me.value?.role === 'admin';

  async function allow(rule: string) {
    if (!environmentId) return;
    setError(undefined);
    try {
      const result = await data(
        api.POST('/agent/environments/{uid}/egress-allow', {
          params: { path: { uid: environmentId } },
          body: { rule },
        }),
      );
      setAllowed((done) => ({ ...done, [rule]: result.added ? 'added' : 'listed' }));
    } catch (failure) {
      setError(failure);
    }
  }

  const action: Column<BlockedHost> = {
    key: 'allow',
    header: 'Allow',
    hiddenHeader: true,
    cell: (row) => {
      const rule = ruleFor(row.host, row.port);
      if (allowed[rule]) {
        return (
          <span role="status">
            {allowed[rule] === 'added' ? 'Allowed' : 'Already allowed'}: <code>{rule}</code>
          </span>
        );
      }
      return (
        <button
          type="button"
          aria-label={`Allow ${rule} in this environment`}
          onClick={() => void allow(rule)}
        >
          Allow in this environment
        </button>
      );
    },
  };
  const canAllow = isAdmin && environmentId !== undefined;
  return (
    <section aria-label="Blocked hosts">
      <h2>Blocked hosts</h2>
      <p className="hint">
        The sandbox&apos;s egress proxy refused these hosts.{' '}
        {!environmentId
          ? 'The run has no environment whose allowlist could list them.'
          : !isAdmin
            ? "Admins can allow a host in the run's environment."
            : 'Allowing one adds it to the environment’s allowlist for the next runs.'}
      </p>
      <DataTable
        label="Blocked hosts"
        rows={rows}
        columns={canAllow ? [...COLUMNS, action] : COLUMNS}
        rowKey={(row) => JSON.stringify([row.host, row.port, row.method, row.reason])}
        empty={null}
      />
      <ErrorMessage error={error} />
    </section>
  );
}
