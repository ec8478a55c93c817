import { Fragment, useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import {
  api,
  ApiError,
  data,
  errorText,
  RUN_CONTENT_DELETED_TITLE,
  saveBlob,
  type Schemas,
} from '../api/client';
import { streamRun, type TimelineEvent } from '../api/run-stream';
import {
  ConfirmButton,
  CopyButton,
  ErrorMessage,
  Json,
  Notice,
  StateBadge,
  useLoad,
} from '../components/ui';
import { RelativeTime, RunDuration, Time } from '../components/time';
import { runModel, TriggerLink } from '../components/run';
import { errorCodeLabel, sourceLabel, stateLabel } from '../labels';
import { formatUsd, runCostUsd } from '../api/usage';
import { EXECUTING_STATES } from '../format';
import { Link, navigate } from '../router';
import { Conversation } from './Conversation';
import { RunTimeline } from './RunTimeline';
import { BlockedHosts } from '../components/BlockedHosts';
import { RunApprovals } from '../components/RunApprovals';

type Run = Schemas['RunItem'];
// A BLOCKED run runs nothing but can still be cancelled (it waits for a person).
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'];
const POLL_MS = 2000;

function mergeTimeline(events: TimelineEvent[], more: TimelineEvent[]): TimelineEvent[] {
  const known = new Set(events.map((event) => event.event_uuid));
  const merged = [...events, ...more.filter((event) => !known.has(event.event_uuid))];
  return merged.sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
}

/** What the run page knows of the conversation. */
interface ConversationView {
  conversation?: Schemas['ConversationResponse'];
  /** The server answered at least once (its 404 "nothing recorded yet" included). */
  read: boolean;
  /** A failure that was no answer about the conversation (a 5xx, the network). */
  error?: unknown;
  /** The server's 404 for content the retention deleted (the run itself is kept). */
  contentDeleted?: string;
}
const UNREAD: ConversationView = { read: false };

/**
 * A run, its timeline and its conversation, kept current by the run's event stream; when the
 * server has no stream (404/405) or it keeps failing, by polling every 2 s.
 */
function useLiveRun(runId: string) {
  const [run, setRun] = useState<Run>();
  const [timeline, setTimeline] = useState<TimelineEvent[]>([]);
  const [conversationView, setConversationView] = useState<ConversationView>(UNREAD);
  const [error, setError] = useState<unknown>();
  const [mode, setMode] = useState<'connecting' | 'live' | 'reconnecting' | 'polling'>(
    'connecting',
  );

  const loadRun = useCallback(
    () =>
      data(api.GET('/agent/runs/{runId}', { params: { path: { runId } } })).then((value) => {
        setRun(value);
        setError(undefined);
      }, setError),
    [runId],
  );
  const loadTimeline = useCallback(
    () =>
      data(api.GET('/agent/runs/{runId}/timeline', { params: { path: { runId } } })).then(
        (value) => setTimeline((events) => mergeTimeline(events, value.events)),
        () => undefined,
      ),
    [runId],
  );
  const loadConversation = useCallback(
    () =>
      data(api.GET('/agent/runs/{runId}/conversation', { params: { path: { runId } } })).then(
        (conversation) => setConversationView({ conversation, read: true }),
        (failure: unknown) => {
          if (!(failure instanceof ApiError) || failure.status !== 404) {
            // Not an answer about the conversation: said as it is, not taken for an empty one.
            setConversationView((view) => ({ ...view, error: failure }));
            return;
          }
          // Other 404s: nothing recorded yet (a queued run), or the run is gone.
          const deleted = failure.title === RUN_CONTENT_DELETED_TITLE;
          setConversationView((view) => ({
            conversation: view.conversation,
            read: true,
            contentDeleted: deleted ? failure.message.replace(/^404: /, '') : undefined,
          }));
        },
      ),
    [runId],
  );
  const refresh = useCallback(
    () => Promise.all([loadRun(), loadTimeline(), loadConversation()]),
    [loadRun, loadTimeline, loadConversation],
  );

  // Messages arrive one by one; the conversation is re-read at most once per burst.
  const pendingConversation = useRef<ReturnType<typeof setTimeout>>(undefined);
  const conversationChanged = useCallback(() => {
    clearTimeout(pendingConversation.current);
    pendingConversation.current = setTimeout(() => void loadConversation(), 150);
  }, [loadConversation]);

  useEffect(() => {
    setRun(undefined);
    setTimeline([]);
    setConversationView(UNREAD);
    void refresh();
    const abort = new AbortController();
    let poller: ReturnType<typeof setInterval> | undefined;
    let lastState: string | undefined;
    void streamRun(
      runId,
      {
        run: (value) => {
          setRun(value);
          if (value.state !== lastState) conversationChanged();
          lastState = value.state;
        },
        timeline: (event) => setTimeline((events) => mergeTimeline(events, [event])),
        message: () => conversationChanged(),
        connected: (live) => {
          setMode(live ? 'live' : 'reconnecting');
          // What happened between the first loads and the stream's start is read once more.
          if (live) {
            void loadTimeline();
            conversationChanged();
          }
        },
      },
      abort.signal,
    ).then((outcome) => {
      if (outcome !== 'unsupported' || abort.signal.aborted) return;
      setMode('polling');
      poller = setInterval(() => void refresh(), POLL_MS);
    });
    return () => {
      abort.abort();
      clearInterval(poller);
      clearTimeout(pendingConversation.current);
    };
  }, [runId, refresh, loadTimeline, conversationChanged]);

  return { run, timeline, conversationView, error, mode, refresh };
}

function Usage({ run }: { run: Run }) {
  const usage = run.request_usage;
  if (!usage) return <span className="muted">—</span>;
  return (
    <span data-testid="run-cost">
      {usage.total_tokens ?? 0} tokens · {formatUsd(runCostUsd(usage) ?? 0)} (inference{' '}
      {formatUsd(usage.inference_cost_usd ?? 0)}, compute {formatUsd(usage.compute_cost_usd ?? 0)})
    </span>
  );
}

async function download(path: 'artifact' | 'transcript', id: string, name: string) {
  const result =
    path === 'artifact'
      ? await api.GET('/agent/artifacts/{artifactUid}/download', {
          params: { path: { artifactUid: id } },
          parseAs: 'blob',
        })
      : await api.GET('/agent/runs/{runId}/transcript', {
          params: { path: { runId: id } },
          parseAs: 'blob',
        });
  if (!result.response.ok) throw new Error(`Download failed (${result.response.status}).`);
  saveBlob(result.data as Blob, name);
}

function Artifacts({ run, onError }: { run: Run; onError: (error: unknown) => void }) {
  const artifacts = run.artifacts ?? [];
  if (artifacts.length === 0) return <p className="muted">No artifacts.</p>;
  return (
    <ul className="plain">
      {artifacts.map((artifact, index) => {
        const item = artifact as { artifact_type: string; data: Record<string, unknown> };
        const uid = item.data.artifact_uid as string | undefined;
        const name = (item.data.filename ?? item.data.title ?? uid ?? item.artifact_type) as string;
        const url = item.data.url as string | undefined;
        return (
          <li key={uid ?? index}>
            <span className="badge">{item.artifact_type}</span> {name}{' '}
            {uid && item.artifact_type !== 'PLAN' && (
              <button
                type="button"
                onClick={() => download('artifact', uid, name).catch(onError)}
                aria-label={`Download ${name}`}
              >
                Download
              </button>
            )}
            {url && (
              <a href={url} rel="noreferrer" target="_blank">
                Open
              </a>
            )}
          </li>
        );
      })}
    </ul>
  );
}

function Followup({ runId, onSent }: { runId: string; onSent: () => void }) {
  const [message, setMessage] = useState('');
  const [answer, setAnswer] = useState<string>();
  const [error, setError] = useState<unknown>();
  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    try {
      const sent = await data(
        api.POST('/agent/runs/{runId}/followups', {
          params: { path: { runId } },
          body: { message },
        }),
      );
      setAnswer(`Follow-up sent (${sent.outcome}).`);
      setMessage('');
      onSent();
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <form className="stack" onSubmit={submit}>
      <label htmlFor="followup">Follow-up</label>
      <textarea
        id="followup"
        rows={3}
        required
        value={message}
        onChange={(event) => setMessage(event.target.value)}
      />
      <div className="actions">
        <button type="submit">Send follow-up</button>
      </div>
      {answer && <Notice>{answer}</Notice>}
      <ErrorMessage error={error} />
    </form>
  );
}

/** Starts a new run with this run's prompt, title, configuration and metadata; opens it. */
async function rerun(run: Run): Promise<void> {
  const created = await data(
    api.POST('/agent/runs', {
      body: {
        prompt: run.prompt,
        title: run.title || undefined,
        config: run.agent_config,
        metadata: { ...run.metadata, rerun_of: run.run_id },
      },
    }),
  );
  navigate(`/runs/${encodeURIComponent(created.run_id)}`);
}

/** A failed run's error code and message, first thing on the page. */
function RunError({ run }: { run: Run }) {
  if (!['FAILED', 'ERROR', 'BLOCKED'].includes(run.state) || !run.status_message) return null;
  const { error_code: code, message } = run.status_message;
  return (
    <div className="run-error" role="alert" data-testid="run-error">
      <p>
        <strong>{code ? errorCodeLabel(code) : stateLabel(run.state)}</strong>{' '}
        {code && <code>{code}</code>}
        {run.status_message.retryable && <span className="muted"> (retryable)</span>}
      </p>
      <div className="status-text" data-testid="status-message">
        {message}
      </div>
    </div>
  );
}

/** Why a QUEUED run does not start: a concurrency limit is full (`at_capacity`). */
function WaitingForSlot({ run }: { run: Run }) {
  if (!run.at_capacity || run.state !== 'QUEUED') return null;
  return (
    <Notice>
      <span data-testid="at-capacity">
        Waiting for a free slot: the concurrency limit (max_concurrent_runs) of this run&apos;s team
        or agent is reached. It starts as soon as another run ends.
      </span>{' '}
      <Link to="/usage">See limits and use</Link>
    </Notice>
  );
}

function Metadata({ run }: { run: Run }) {
  const entries = Object.entries(run.metadata ?? {});
  if (entries.length === 0) return <p className="muted">No metadata.</p>;
  return (
    <dl className="facts">
      {entries.map(([key, value]) => (
        <Fragment key={key}>
          <dt>{key}</dt>
          <dd>
            <code>{value}</code>
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

function Attachments({ runId }: { runId: string }) {
  const list = useLoad(
    () => data(api.GET('/agent/runs/{runId}/handoff/attachments', { params: { path: { runId } } })),
    [runId],
  );
  if (list.error) return <ErrorMessage error={list.error} />;
  const attachments = list.value?.attachments ?? [];
  if (attachments.length === 0) return <p className="muted">No attachments.</p>;
  return (
    <ul className="plain">
      {attachments.map((attachment) => (
        <li key={attachment.attachment_id}>
          <a href={attachment.download_url} download={attachment.filename}>
            {attachment.filename}
          </a>{' '}
          <span className="muted">{attachment.mime_type}</span>
        </li>
      ))}
    </ul>
  );
}

/** A run past AMBIENT_RUN_CONTENT_RETENTION_DAYS: what is gone, what is kept, and the server's word. */
function ContentDeleted({ detail }: { detail: string }) {
  return (
    <div className="notice" role="status" data-testid="content-deleted">
      <p>
        This run&apos;s timeline, conversation, follow-ups, attachments, files and transcript were
        deleted by the content retention. Its record, usage, metadata and links are kept; it can be
        re-run, not followed up.
      </p>
      <p className="muted">{detail}</p>
    </div>
  );
}

export function RunDetailPage({ runId }: { runId: string }) {
  const { run, timeline, conversationView, error, mode, refresh } = useLiveRun(runId);
  const { contentDeleted } = conversationView;
  const [answer, setAnswer] = useState<string>();
  const [actionError, setActionError] = useState<unknown>();

  async function cancel() {
    setAnswer(undefined);
    setActionError(undefined);
    const result = await api.POST('/agent/runs/{runId}/cancel', { params: { path: { runId } } });
    if (result.response.ok) setAnswer(`Cancel accepted: ${String(result.data ?? 'ok')}`);
    else {
      const problem = result.error as { detail?: string; error?: string } | undefined;
      setActionError(
        new Error(
          `Cancel refused (${result.response.status}): ${problem?.detail ?? problem?.error}`,
        ),
      );
    }
    await refresh();
  }

  if (!run) {
    return (
      <section>
        <h1>Run</h1>
        {error ? <ErrorMessage error={error} /> : <p className="muted">Loading…</p>}
      </section>
    );
  }
  const terminal = TERMINAL.includes(run.state);
  return (
    <section>
      <p>
        <Link to="/runs">← Runs</Link>
      </p>
      <div className="page-head">
        <h1>{run.title || 'Run'}</h1>
        {!terminal && (
          <span className={`live live-${mode}`} role="status" aria-live="polite">
            {mode === 'live' ? 'Live' : mode === 'polling' ? 'Updating every 2 s' : mode}
          </span>
        )}
      </div>
      <div className="run-header">
        <span data-testid="run-state">
          <StateBadge state={run.state} />
        </span>
        <span title="Duration">
          <span className="label">Duration</span> <RunDuration run={run} />
        </span>
        <span>
          <span className="label">Model</span> <code>{runModel(run)}</code>
        </span>
        <span>
          <span className="label">Trigger</span> <TriggerLink run={run} />
        </span>
        <span>
          <span className="label">Created</span> <RelativeTime value={run.created_at} />
        </span>
      </div>
      <div className="actions">
        <CopyButton text={run.run_id} label="Copy run id">
          Copy id
        </CopyButton>
        <button type="button" onClick={() => rerun(run).catch(setActionError)}>
          Re-run
        </button>
        {!contentDeleted && (
          <a className="button" href="#followup">
            Follow up
          </a>
        )}
        {!terminal && (
          <ConfirmButton
            label="Cancel run"
            question="Cancel this run? Its execution stops."
            confirm="Cancel run"
            className="danger"
            onConfirm={() => cancel().catch(setActionError)}
          />
        )}
        {run.conversation_id && !contentDeleted && (
          <button
            type="button"
            onClick={() =>
              download('transcript', run.run_id, `transcript-${run.run_id}.jsonl`).catch(
                setActionError,
              )
            }
          >
            Download transcript
          </button>
        )}
      </div>
      <RunError run={run} />
      <WaitingForSlot run={run} />
      {run.status_message?.message && !run.status_message.error_code && (
        <p className="muted status-text" data-testid="status-message">
          {run.status_message.message}
        </p>
      )}
      {answer && <Notice>{answer}</Notice>}
      <ErrorMessage error={actionError} />
      <RunApprovals run={run} onDecided={() => void refresh()} />
      {contentDeleted && <ContentDeleted detail={contentDeleted} />}
      <h2>Timeline</h2>
      {!contentDeleted && (
        <RunTimeline
          events={timeline}
          finishedAt={run.finished_at}
          executing={EXECUTING_STATES.includes(run.state)}
          ended={terminal}
        />
      )}
      <BlockedHosts events={timeline} environmentId={run.agent_config?.environment_id} />
      <h2>Prompt</h2>
      <pre className="prompt">{run.prompt}</pre>
      <h2>Conversation</h2>
      <ErrorMessage error={conversationView.error} />
      {!contentDeleted && (
        <Conversation
          conversation={conversationView.conversation}
          ended={terminal}
          read={conversationView.read}
        />
      )}
      <h2>Details</h2>
      <dl className="facts">
        <dt>Run id</dt>
        <dd>
          <code>{run.run_id}</code>
        </dd>
        <dt>Source</dt>
        <dd>{sourceLabel(run.source)}</dd>
        <dt>Creator</dt>
        <dd>{run.creator?.display_name ?? run.creator?.uid ?? '—'}</dd>
        <dt>Created</dt>
        <dd>
          <Time value={run.created_at} />
        </dd>
        <dt>Started</dt>
        <dd>
          <Time value={run.started_at} />
        </dd>
        <dt>Finished</dt>
        <dd>
          <Time value={run.finished_at} />
        </dd>
        <dt>Usage and cost</dt>
        <dd>
          <Usage run={run} />
        </dd>
      </dl>
      <h3>Configuration</h3>
      <Json value={run.agent_config ?? {}} summary="Show configuration" />
      <h3>Metadata</h3>
      <Metadata run={run} />
      <h2>Attachments</h2>
      <Attachments runId={run.run_id} />
      <h2>Artifacts</h2>
      <Artifacts run={run} onError={setActionError} />
      {!contentDeleted && (
        <>
          <h2 id="followup-heading">Follow up</h2>
          <Followup runId={run.run_id} onSent={() => void refresh()} />
        </>
      )}
      {error ? <p className="error">{errorText(error)}</p> : null}
    </section>
  );
}
