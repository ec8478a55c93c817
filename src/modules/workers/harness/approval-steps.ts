import type { ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';
import { evaluateApproval, type ApprovalSubject } from '../../run-config';
import { hostPort } from '../sandbox/egress-proxy/egress-decisions';
import { unansweredTrailingCalls } from '../conversation-history';
import type {
  ApprovalGate,
  ApprovalRequestDraft,
  ChatMessage,
  RecordedApproval,
} from './harness.types';
import {
  egressRequest,
  questionFor,
  toolVerdict,
  type ToolCallFacts,
  type ToolVerdict,
} from './tools/tool-approvals';
import { toolDenied, type ToolOutcome } from './tools/tool.types';

/** What answering one tool call came to: its result, or the request the execution waits on. */
export type ToolStep = ToolOutcome | { pending: ApprovalRequestDraft };

/** The result of an approved call whose decision an earlier execution took (and may have run). */
export const NOT_RUN_AGAIN =
  'Not run: an earlier execution of this run already took the decision on this call and may ' +
  'have started it, so it is not run a second time. Check its effects before repeating it.';

/**
 * The built-in harness's side of approvals: the rules' verdict on each call, ask_user, and, in
 * an execution that resumes a BLOCKED run, the decisions people made: an approved call runs (the
 * decision is taken first, fenced, so it runs once), a denied one is reported with who denied it
 * and why, an answer becomes ask_user's result. Without a gate everything is allowed and nothing
 * is asked.
 */
export class ApprovalSteps {
  /** The run's untaken requests, read once when the execution resumes. */
  private requests: RecordedApproval[] = [];

  constructor(private readonly gate: ApprovalGate | undefined) {}

  /** Whether the execution can wait for a person (ask_user is offered). */
  get canAsk(): boolean {
    return this.gate !== undefined;
  }

  /**
   * The rules on a call before it runs. `approved`: a person approved this very call, so an
   * `ask` lets it through; a `deny` (a rule added while the run waited) still refuses it.
   */
  verdict(call: ToolCallFacts, subject: ApprovalSubject | null, approved = false): ToolVerdict {
    if (!this.gate) return { effect: 'allow' };
    const verdict = toolVerdict(this.gate.rules, call, subject);
    return approved && verdict.effect === 'ask' ? { effect: 'allow' } : verdict;
  }

  /** An ask_user call: the question the run waits on, or the error for a call without one. */
  question(call: ToolCallFacts): ToolStep {
    const question = questionFor(call);
    return 'kind' in question ? { pending: question } : question;
  }

  /**
   * The calls a resumed execution answers before anything else: those of the conversation's
   * last assistant message without a result (kept open because one of them waits on a request).
   */
  async pendingCalls(history: ChatMessage[]): Promise<ChatCompletionMessageToolCall[]> {
    if (!this.gate) return [];
    this.requests = await this.gate.untaken();
    return unansweredTrailingCalls(history).map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }

  /**
   * The step of a call a person was asked about; undefined for a call without a request (the
   * rules decide it as usual). A request nobody decided yet blocks the execution again on it.
   */
  async decidedStep(
    call: ChatCompletionMessageToolCall,
    runApproved: () => Promise<ToolStep>,
  ): Promise<ToolStep | undefined> {
    const request = this.requests.find((r) => r.toolCallId === call.id);
    if (!request || !this.gate) return undefined;
    if (request.decision === null) return { pending: waitingAgain(request) };
    if (!(await this.gate.take(request.id))) return { content: NOT_RUN_AGAIN };
    const who = request.decidedBy ?? 'a person';
    switch (request.decision) {
      case 'approve':
        return runApproved();
      case 'deny':
        return toolDenied(
          `${who} denied this call, so it was not run` +
            (request.comment ? `. Their reason: ${request.comment}` : '.'),
        );
      case 'answer':
        return { content: `${who} answered: ${request.comment ?? ''}` };
    }
  }

  /**
   * The decisions on hosts the proxy refused, told to the model as notes (`note` adds a user
   * turn), once each; a request nobody decided yet is returned to block on again.
   */
  async egressNotes(note: (text: string) => Promise<void>): Promise<ApprovalRequestDraft | null> {
    if (!this.gate) return null;
    for (const request of this.requests.filter((r) => r.tool === 'egress')) {
      if (request.decision === null) return waitingAgain(request);
      if (!(await this.gate.take(request.id))) continue;
      await note(egressNote(request));
    }
    return null;
  }

  /** After a round of calls: a host outside the allowlist the proxy refused that a rule asks about. */
  egressAsk(): ApprovalRequestDraft | null {
    const gate = this.gate;
    if (!gate?.unlistedEgress) return null;
    for (const target of gate.unlistedEgress()) {
      const verdict = evaluateApproval(gate.rules, { kind: 'egress', ...target });
      if (verdict.effect === 'ask') return egressRequest(target, verdict.rule);
    }
    return null;
  }
}

/** A request of an earlier execution that still waits: the run blocks on it again. */
function waitingAgain(request: RecordedApproval): ApprovalRequestDraft {
  return {
    existingId: request.id,
    kind: request.kind,
    tool: request.tool,
    toolCallId: request.toolCallId,
    arguments: request.arguments,
    rule: request.rule,
    summary: request.summary,
  };
}

function egressNote(request: RecordedApproval): string {
  const { host, port } = request.arguments as { host: string; port: number };
  const target = hostPort(host, port);
  const who = request.decidedBy ?? 'a person';
  if (request.decision === 'approve') {
    return (
      `[Ambient] ${who} approved egress to ${target}: it is allowed for the rest of this run, ` +
      'so retry what it refused.' +
      (request.comment ? ` Their note: ${request.comment}` : '')
    );
  }
  return (
    `[Ambient] ${who} denied egress to ${target}; it stays refused, so do without it.` +
    (request.comment ? ` Their reason: ${request.comment}` : '')
  );
}
