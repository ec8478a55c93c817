import type { Schemas } from '../api/client';
import { Collapsible, Json, Time } from '../components/ui';

type Block = Schemas['ConversationContentBlock'];

function outputText(output: Record<string, unknown>): string {
  // A command's result: its output as text, then how it ended.
  if (typeof output.output === 'string') {
    const { output: text, ...rest } = output;
    const status = Object.entries(rest).map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
    return status.length ? `${text}\n— ${status.join(', ')}` : text;
  }
  const keys = Object.keys(output);
  // Tool output is usually one text field (stdout, content, …): show it as text.
  if (keys.length === 1 && typeof output[keys[0]] === 'string') return output[keys[0]] as string;
  return JSON.stringify(output, null, 2);
}

function ContentBlock({ block }: { block: Block }) {
  switch (block.type) {
    case 'text':
      return <Collapsible text={block.text} summary="Show message" />;
    case 'action':
      return (
        <div className="tool-call">
          <p>
            <span className="badge">tool call</span> <code>{block.name}</code>{' '}
            <span className="muted">({block.category})</span>
          </p>
          <Json value={block.input} summary="Show input" />
        </div>
      );
    case 'action_result':
      return (
        <div className="tool-result">
          <p>
            <span className="badge">tool output</span> <code>{block.name}</code>{' '}
            <span className={`muted state-${block.state}`}>{block.state}</span>
          </p>
          <Collapsible text={outputText(block.output)} summary="Show output" />
        </div>
      );
    case 'event':
      return (
        <p className="muted">
          event <code>{block.name}</code>
        </p>
      );
    default:
      return <Json value={block} />;
  }
}

export function Message({ message }: { message: Schemas['ConversationMessage'] }) {
  return (
    <li className={`message role-${message.role}`}>
      <p className="message-head">
        <strong>{message.role}</strong> <Time value={message.timestamp} />
      </p>
      {message.content.map((block, index) => (
        <ContentBlock key={index} block={block} />
      ))}
    </li>
  );
}

/**
 * The API adds the run's timeline events to the conversation as system messages; the run page
 * shows them in its timeline already, so the conversation leaves them out.
 */
function isTimelineEcho(message: Schemas['ConversationMessage']): boolean {
  return message.role === 'system' && message.content.every((block) => block.type === 'event');
}

function visibleMessages(step: Schemas['ConversationStep']): Schemas['ConversationMessage'][] {
  return step.messages.filter((message) => !isTimelineEcho(message));
}

function isEmpty(step: Schemas['ConversationStep']): boolean {
  return visibleMessages(step).length === 0 && step.steps.every(isEmpty);
}

function Step({ step }: { step: Schemas['ConversationStep'] }) {
  return (
    <>
      {visibleMessages(step).map((message, index) => (
        <Message key={`${step.id}-${index}`} message={message} />
      ))}
      {step.steps.map((child) => (
        <Step key={child.id} step={child} />
      ))}
    </>
  );
}

/**
 * `ended`: the run will record nothing more, so an empty conversation stays empty. `read`: the
 * server answered at least once (before that, nothing is known yet).
 */
export function Conversation({
  conversation,
  ended = false,
  read = true,
}: {
  conversation?: Schemas['ConversationResponse'];
  ended?: boolean;
  read?: boolean;
}) {
  const steps = conversation?.steps ?? [];
  if (!read) return <p className="muted">Loading…</p>;
  if (steps.every(isEmpty)) {
    return (
      <p className="muted">
        {ended ? 'This run recorded no conversation.' : 'Nothing recorded yet.'}
      </p>
    );
  }
  return (
    <ol className="conversation" aria-label="Conversation">
      {steps.map((step) => (
        <Step key={step.id} step={step} />
      ))}
    </ol>
  );
}
