import { useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { api, data, errorText, saveBlob, type Schemas } from '../api/client';
import { streamRun, type TimelineEvent } from '../api/run-stream';
import { ConfirmButton, ErrorMessage, Json, Notice, StateBadge, Time } from '../components/ui';
import { formatUsd, runCostUsd } from '../api/usage';
import { Link } from '../router';
import { Conversation } from './Conversation';

type Run = Schemas['RunItem'];
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED', 'BLOCKED'];
const POLL_MS = 2000;

function mergeTimeline(events: TimelineEvent[], more: TimelineEvent[]): TimelineEvent[] {
  const known = new Set(events.map((event) => event.event_uuid));
  const merged = [...events, ...more.filter((event) => !known.has(event.event_uuid))];
  return merged.sort((a, b) => a.occurred_at.localeCompare(b.occurred_at));
}

/**
 * A run, its timeline and its conversation, kept current by the run's event stream; when the
 * server has no stream (404/405) or it keeps failing, by polling every 2 s.
 */
function useLiveRun(runId: string) {
  const [run, setRun] = useState<Run>();
  const [timeline, setTimeline] = useState<TimelineEvent[]>([]);
  const [conversation, setConversation] = useState<Schemas['ConversationResponse']>();
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
        setConversation,
        () => undefined,
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
    setConversation(undefined);
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
        connected: (live) => setMode(live ? 'live' : 'reconnecting'),
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
  }, [runId, refresh, conversationChanged]);

  return { run, timeline, conversation, error, mode, refresh };
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

export function RunDetailPage({ runId }: { runId: string }) {
  const { run, timeline, conversation, error, mode, refresh } = useLiveRun(runId);
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
        <span className="live" role="status" aria-live="polite">
          {mode === 'live' ? 'Live' : mode === 'polling' ? 'Updating every 2 s' : mode}
        </span>
      </div>
      <dl className="facts">
        <dt>State</dt>
        <dd data-testid="run-state">
          <StateBadge state={run.state} />
          {run.status_message?.message && <span> {run.status_message.message}</span>}
        </dd>
        <dt>Run id</dt>
        <dd>
          <code>{run.run_id}</code>
        </dd>
        <dt>Source</dt>
        <dd>{run.source ?? '—'}</dd>
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
      <div className="actions">
        {!terminal && (
          <ConfirmButton
            label="Cancel run"
            question="Cancel this run? Its execution stops."
            confirm="Cancel run"
            className="danger"
            onConfirm={() => cancel().catch(setActionError)}
          />
        )}
        {run.conversation_id && (
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
      {answer && <Notice>{answer}</Notice>}
      <ErrorMessage error={actionError} />
      <h2>Prompt</h2>
      <pre className="prompt">{run.prompt}</pre>
      <h2>Configuration</h2>
      <Json value={run.agent_config ?? {}} summary="Show configuration" />
      <h2>Timeline</h2>
      <ol className="timeline" aria-label="Timeline">
        {timeline.map((event) => (
          <li key={event.event_uuid}>
            <Time value={event.occurred_at} /> <code>{event.event_type}</code>
          </li>
        ))}
      </ol>
      <h2>Conversation</h2>
      <Conversation conversation={conversation} />
      <h2>Artifacts</h2>
      <Artifacts run={run} onError={setActionError} />
      <h2>Follow up</h2>
      <Followup runId={run.run_id} onSent={() => void refresh()} />
      {error ? <p className="error">{errorText(error)}</p> : null}
    </section>
  );
}
