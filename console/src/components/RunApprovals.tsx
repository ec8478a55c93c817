import { useState } from 'react';
import { api, data } from '../api/client';
import { runApprovals, type Approval } from '../api/approvals';
import { ApprovalCard, type Decided } from './ApprovalControls';
import { ErrorMessage, useLoad } from './ui';

/**
 * A run's requests of a person: while it is BLOCKED, "Waiting for a person" with the pending
 * request(s) and their controls; below, the history of its decided requests. Nothing for a run
 * that never asked. Re-read whenever the run changes (its state, a new execution).
 */
export function RunApprovals({
  run,
  onDecided,
}: {
  run: { run_id: string; state: string; updated_at: string };
  onDecided: () => void;
}) {
  const list = useLoad(() => runApprovals(run.run_id), [run.run_id, run.state, run.updated_at]);
  const me = useLoad(() => data(api.GET('/me')), []);
  const approvals = list.value ?? [];
  const pending = approvals.filter((approval) => !approval.decision);
  const decided = approvals.filter((approval) => approval.decision);

  const [conflicts, setConflicts] = useState(new Map<string, string>());
  const replaced: Decided = (approval, outcome) => {
    list.setValue(approvals.map((known) => (known.id === approval.id ? approval : known)));
    if (outcome.conflict) {
      setConflicts((known) => new Map(known).set(approval.id, outcome.conflict!));
    }
    onDecided();
  };
  const card = (approval: Approval) => (
    <ApprovalCard
      key={approval.id}
      approval={approval}
      role={me.value?.role}
      runState={run.state}
      onDecided={replaced}
      conflict={conflicts.get(approval.id)}
    />
  );

  if (list.error) return <ErrorMessage error={list.error} />;
  if (approvals.length === 0) return null;
  return (
    <>
      {pending.length > 0 && (
        <section className="panel waiting" aria-labelledby="waiting-heading">
          <h2 id="waiting-heading">Waiting for a person</h2>
          <p className="hint">
            The run is paused without a sandbox until every request below is decided; then it is
            queued and resumes where it stopped.
          </p>
          {pending.map(card)}
        </section>
      )}
      {decided.length > 0 && (
        <section aria-labelledby="decided-heading">
          <h2 id="decided-heading">Decided requests</h2>
          {decided.map(card)}
        </section>
      )}
    </>
  );
}
