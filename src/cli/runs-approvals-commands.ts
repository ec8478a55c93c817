import { API_OPTION_HELP, API_OPTIONS, callApi, JSON_OPTION, JSON_OPTION_HELP } from './api-http';
import { CliCommand, CliIo, OptionValues, optionalText, requiredText } from './cli-command';
import { UsageError } from './cli-errors';

/** A request as GET /agent/runs/{id}/approvals answers it (the fields printed). */
interface Approval {
  id: string;
  kind: 'approval' | 'question';
  tool: string;
  arguments: Record<string, unknown>;
  summary: string;
  requested_at: string;
  decision: string | null;
  comment: string | null;
  decided_by: { name: string } | null;
  decided_at: string | null;
}

/** The longest comment or answer the API takes. */
const MAX_COMMENT = 20_000;

const approvalsPath = (values: OptionValues, requestId?: string) =>
  `/agent/runs/${encodeURIComponent(String(values['run-id']))}/approvals` +
  (requestId ? `/${encodeURIComponent(requestId)}` : '');

/** `<id>  PENDING  approval  <summary>`, then the call in full and the decision, indented. */
function printApproval(io: CliIo, approval: Approval): void {
  const state = (approval.decision ?? 'pending').toUpperCase();
  io.out(`${approval.id}  ${state.padEnd(7)}  ${approval.kind.padEnd(8)}  ${approval.summary}`);
  io.out(`    call      ${approval.tool} ${JSON.stringify(approval.arguments)}`);
  io.out(`    asked     ${approval.requested_at}`);
  if (approval.decision) {
    const by = approval.decided_by?.name ?? 'someone';
    const comment = approval.comment ? `: ${approval.comment.replace(/\n/g, ' ')}` : '';
    io.out(`    decided   ${approval.decision} by ${by} at ${approval.decided_at}${comment}`);
  }
}

export const runsApprovalsCommand: CliCommand = {
  name: 'runs approvals',
  synopsis: 'runs approvals <run-id> [--json]',
  summary: "A run's requests for approval and its questions, oldest first, with their decisions.",
  details: [
    '',
    'Prints each request as `<request-id>  PENDING|APPROVE|DENY|ANSWER  approval|question',
    '<summary>`, then the call in full, when it was asked and, once decided, who decided and why.',
    'A run waits BLOCKED while one is pending: decide it with `runs approve`, `runs deny` or',
    '`runs answer`.',
    '',
    'Options:',
    JSON_OPTION_HELP,
    ...API_OPTION_HELP,
  ],
  options: { ...API_OPTIONS, ...JSON_OPTION },
  positionals: ['run-id'],
  async run(values, io) {
    const answer = (await callApi(values, io, 'GET', approvalsPath(values))) as {
      approvals: Approval[];
    };
    if (values.json === true) io.out(JSON.stringify(answer));
    else answer.approvals.forEach((approval) => printApproval(io, approval));
  },
};

/** Sends one decision and prints what became of the run. */
async function decide(
  values: OptionValues,
  io: CliIo,
  decision: 'approve' | 'deny' | 'answer',
  comment: string | null,
): Promise<void> {
  const requestId = String(values['request-id']);
  const answer = (await callApi(values, io, 'POST', approvalsPath(values, requestId), {
    decision,
    ...(comment === null ? {} : { comment }),
  })) as { approval: Approval; run_state: string };
  if (values.json === true) {
    io.out(JSON.stringify(answer));
    return;
  }
  const done = { approve: 'approved', deny: 'denied', answer: 'answered' }[decision];
  const next =
    answer.run_state === 'QUEUED'
      ? 'the run is QUEUED and resumes'
      : `the run stays ${answer.run_state}: another request of it is still pending`;
  io.out(`${done} ${requestId}; ${next}`);
}

const DECISION_HELP = [
  'Prints what the decision did, e.g. "approved <request-id>; the run is QUEUED and resumes".',
  "Exits 1 with the API's reason when it is refused: 403 (not allowed to decide), 404, 409",
  '(decided already, or the run does not wait for a decision).',
];

export const runsApproveCommand: CliCommand = {
  name: 'runs approve',
  synopsis: 'runs approve <run-id> <request-id> [--comment <text>] [--json]',
  summary: 'Approve a pending request of a BLOCKED run: the call it asked about runs, once.',
  details: [
    '',
    ...DECISION_HELP,
    '',
    'Options:',
    '  --comment <text>  a note kept with the decision',
    "  --json          the API's answer as one JSON line",
    ...API_OPTION_HELP,
  ],
  options: { ...API_OPTIONS, ...JSON_OPTION, comment: { type: 'string' } },
  positionals: ['run-id', 'request-id'],
  run: (values, io) => decide(values, io, 'approve', optionalText(values, 'comment', MAX_COMMENT)),
};

export const runsDenyCommand: CliCommand = {
  name: 'runs deny',
  synopsis: 'runs deny <run-id> <request-id> --comment <text> [--json]',
  summary: 'Deny a pending request of a BLOCKED run: the agent is told it was denied, and why.',
  details: [
    '',
    ...DECISION_HELP,
    '',
    'Options:',
    '  --comment <text>  why (required): the agent reads it and may take another way',
    "  --json          the API's answer as one JSON line",
    ...API_OPTION_HELP,
  ],
  options: { ...API_OPTIONS, ...JSON_OPTION, comment: { type: 'string' } },
  positionals: ['run-id', 'request-id'],
  run: (values, io) => decide(values, io, 'deny', requiredText(values, 'comment', MAX_COMMENT)),
};

export const runsAnswerCommand: CliCommand = {
  name: 'runs answer',
  synopsis: 'runs answer <run-id> <request-id> <text> [--json]',
  summary: "Answer a BLOCKED run's question: the agent gets the answer and goes on.",
  details: ['', ...DECISION_HELP, '', 'Options:', JSON_OPTION_HELP, ...API_OPTION_HELP],
  options: { ...API_OPTIONS, ...JSON_OPTION },
  positionals: ['run-id', 'request-id', 'text'],
  run: (values, io) => {
    const text = String(values.text).trim();
    if (!text) throw new UsageError('<text> must not be empty: it is the answer');
    if (text.length > MAX_COMMENT) {
      throw new UsageError(`<text> must be at most ${MAX_COMMENT} characters`);
    }
    return decide(values, io, 'answer', text);
  },
};

export const RUN_APPROVAL_COMMANDS: CliCommand[] = [
  runsApprovalsCommand,
  runsApproveCommand,
  runsDenyCommand,
  runsAnswerCommand,
];
