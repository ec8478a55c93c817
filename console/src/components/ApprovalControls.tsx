import { useId, useState, type FormEvent, type ReactNode } from 'react';
import { decideApproval, type Approval, type Decision } from '../api/approvals';
import { ErrorMessage } from './ui';
import { RelativeTime } from './time';

type Rule = NonNullable<Approval['rule']>;

/** The rule that asked, in words (the console's reading of the API's ApprovalRule). */
export function ruleText(rule: Rule | null): string {
  if (!rule) return 'the agent asked (a question)';
  if (rule.command !== undefined) return `commands matching /${rule.command}/ (${rule.effect})`;
  if (rule.mcp_tool !== undefined) return `MCP tool ${rule.mcp_tool} (${rule.effect})`;
  if (rule.write_outside) return `writes outside ${rule.write_outside.join(', ')} (${rule.effect})`;
  if (rule.egress) return `egress to hosts outside the allowlist (${rule.effect})`;
  return JSON.stringify(rule);
}

/**
 * The request as it is after a decision: decided by this console (with the run's state after
 * it), or, when someone else decided first (409), as they left it and why this one was refused.
 */
export type Decided = (
  approval: Approval,
  outcome: { runState?: string; conflict?: string },
) => void;

const DECISION_WORDS: Record<Decision, string> = {
  approve: 'Approved',
  deny: 'Denied',
  answer: 'Answered',
};

/**
 * What the agent asked to do, in full: a command as the agent wrote it (long lines wrap), the
 * other arguments pretty-printed, a question as its text. Never shortened: this is what a person
 * approves.
 */
export function ApprovalCall({ approval }: { approval: Approval }) {
  const { command, question, ...rest } = approval.arguments;
  const others = typeof command === 'string' || typeof question === 'string' ? rest : null;
  return (
    <div className="approval-call" data-testid="approval-call">
      <p>
        <span className="label">Tool</span> <code>{approval.tool}</code>
      </p>
      {typeof question === 'string' && <pre className="approval-question">{question}</pre>}
      {typeof command === 'string' && (
        <pre className="approval-command" aria-label="Command">
          {command}
        </pre>
      )}
      {others === null ? (
        <pre aria-label="Arguments">{JSON.stringify(approval.arguments, null, 2)}</pre>
      ) : (
        Object.keys(others).length > 0 && (
          <pre aria-label="Other arguments">{JSON.stringify(others, null, 2)}</pre>
        )
      )}
    </div>
  );
}

/** Who decided, when, and their comment (a denial's reason or the answer). */
export function ApprovalOutcome({ approval }: { approval: Approval }) {
  if (!approval.decision) return null;
  return (
    <div
      className={`approval-outcome decision-${approval.decision}`}
      data-testid="approval-outcome"
    >
      <p>
        <strong>{DECISION_WORDS[approval.decision]}</strong> by{' '}
        {approval.decided_by?.name ?? 'someone'} <RelativeTime value={approval.decided_at} />
      </p>
      {approval.comment && <pre className="approval-comment">{approval.comment}</pre>}
    </div>
  );
}

/** Why the signed-in caller sees no buttons on an undecided request. */
function whyNoControls(role: string | undefined, runState: string | undefined): string {
  if (role === 'viewer')
    return 'Viewers can see requests but not decide them: ask a member or an admin.';
  if (runState && runState !== 'BLOCKED') {
    return `The run is ${runState.toLowerCase()}, so this request waits for no decision.`;
  }
  return "Only the agent identity's named approvers and team admins may decide this request.";
}

/**
 * Approve / Deny (with an optional comment told to the agent) for an approval, an answer box for
 * a question. `onDecided` gets the request as it is now: decided by this click, or by someone
 * else first (409: their name and time are shown, the page stays).
 */
export function ApprovalControls({
  approval,
  role,
  runState,
  onDecided,
}: {
  approval: Approval;
  role?: string;
  runState?: string;
  onDecided: Decided;
}) {
  const id = useId();
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();

  if (approval.decision) return null;
  if (!approval.can_decide) return <p className="hint">{whyNoControls(role, runState)}</p>;

  async function decide(decision: Decision) {
    setBusy(true);
    setError(undefined);
    try {
      const outcome = await decideApproval(approval, decision, comment);
      if (outcome.kind === 'conflict') {
        onDecided(outcome.approval ?? approval, {
          conflict: `Someone else decided first (${outcome.conflict}).`,
        });
      } else onDecided(outcome.approval, { runState: outcome.runState });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  const question = approval.kind === 'question';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    void decide(question ? 'answer' : ((submitter?.value ?? 'deny') as Decision));
  };
  return (
    <form className="approval-controls stack" onSubmit={submit} aria-label="Decide">
      <label htmlFor={`${id}-comment`}>
        {question ? 'Answer' : 'Comment (optional, the agent is told why it was denied)'}
      </label>
      <textarea
        id={`${id}-comment`}
        rows={2}
        required={question}
        value={comment}
        onChange={(event) => setComment(event.target.value)}
      />
      <div className="actions">
        {question ? (
          <button type="submit" className="primary" disabled={busy}>
            Send answer
          </button>
        ) : (
          <>
            <button type="submit" value="approve" className="primary" disabled={busy}>
              Approve
            </button>
            <button type="submit" value="deny" className="danger" disabled={busy}>
              Deny
            </button>
          </>
        )}
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

/** One request: what it asks, the rule, who/when, and its decision or the controls. */
export function ApprovalCard({
  approval,
  role,
  runState,
  onDecided,
  heading,
  conflict,
}: {
  approval: Approval;
  role?: string;
  runState?: string;
  onDecided: Decided;
  heading?: ReactNode;
  /** Why this console's decision was refused: someone else decided first (409). */
  conflict?: string;
}) {
  return (
    <article className="approval-card" data-testid="approval" data-approval-id={approval.id}>
      {heading}
      <p className="approval-summary">
        <strong>{approval.kind === 'question' ? 'Question' : 'Approval'}:</strong>{' '}
        {approval.summary}
      </p>
      <ApprovalCall approval={approval} />
      <p className="hint">
        <span className="label">Rule</span> {ruleText(approval.rule)} · requested{' '}
        <RelativeTime value={approval.requested_at} />
      </p>
      <ApprovalOutcome approval={approval} />
      {conflict && (
        <p className="error" role="alert">
          {conflict}
        </p>
      )}
      <ApprovalControls approval={approval} role={role} runState={runState} onDecided={onDecided} />
    </article>
  );
}
