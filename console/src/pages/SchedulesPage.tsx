import { useMemo, useState, type FormEvent } from 'react';
import { parseCronSchedule } from '../../../src/modules/schedules/cron-schedule';
import { api, data, type Schemas } from '../api/client';
import { RefusalNotice, useRefusal } from '../components/access';
import { DataTable, type Column } from '../components/table';
import { ConfirmButton, ErrorMessage, Time, useLoad } from '../components/ui';
import { EnvironmentSelect, ModelSelect, useRunChoices } from './NewRunPage';
import { RunsTable } from './RunsPage';
import { useRoute } from '../router';

type Schedule = Schemas['ScheduledAgentItem'];

/** The next `count` firings, computed with the scheduler's own parser (UTC), or why not. */
export function previewFirings(expression: string, count = 5): Date[] | string {
  try {
    const schedule = parseCronSchedule(expression);
    const times: Date[] = [];
    let after = new Date();
    for (let i = 0; i < count; i++) {
      const next = schedule.nextAfter(after);
      if (!next) break;
      times.push(next);
      after = next;
    }
    return times;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

function ScheduleForm({ schedule, onSaved }: { schedule?: Schedule; onSaved: () => void }) {
  const choices = useRunChoices();
  const [name, setName] = useState(schedule?.name ?? '');
  const [cron, setCron] = useState(schedule?.cron_schedule ?? '0 9 * * 1-5');
  const [prompt, setPrompt] = useState(schedule?.prompt ?? '');
  const [model, setModel] = useState(schedule?.agent_config.model_id ?? '');
  const [environment, setEnvironment] = useState(schedule?.agent_config.environment_id ?? '');
  const [enabled, setEnabled] = useState(schedule?.enabled ?? true);
  const [error, setError] = useState<unknown>();
  const preview = useMemo(() => previewFirings(cron), [cron]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    const body = {
      name,
      cron_schedule: cron,
      prompt,
      enabled,
      agent_config: {
        ...(schedule?.agent_config ?? {}),
        model_id: model || undefined,
        environment_id: environment || undefined,
      },
    };
    try {
      if (schedule) {
        await data(
          api.PUT('/agent/schedules/{scheduleId}', {
            params: { path: { scheduleId: schedule.id } },
            body,
          }),
        );
      } else {
        await data(api.POST('/agent/schedules', { body }));
      }
      onSaved();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <form
      className="stack"
      onSubmit={submit}
      aria-label={schedule ? 'Edit schedule' : 'New schedule'}
    >
      <label htmlFor="schedule-name">Name</label>
      <input id="schedule-name" required value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="schedule-cron">Cron expression (UTC)</label>
      <input
        id="schedule-cron"
        required
        value={cron}
        onChange={(e) => setCron(e.target.value)}
        aria-describedby="schedule-preview"
      />
      <div id="schedule-preview" aria-live="polite">
        {typeof preview === 'string' ? (
          <p className="error">{preview}</p>
        ) : (
          <>
            <p className="hint">Next {preview.length} firing times:</p>
            <ol className="preview">
              {preview.map((time) => (
                <li key={time.toISOString()}>
                  <time dateTime={time.toISOString()}>
                    {time.toISOString().replace('T', ' ').slice(0, 19)} UTC
                  </time>
                </li>
              ))}
            </ol>
          </>
        )}
      </div>
      <label htmlFor="schedule-prompt">Prompt</label>
      <textarea
        id="schedule-prompt"
        required
        rows={4}
        value={prompt}
        onChange={(e) => setPrompt(e.target.value)}
      />
      <label htmlFor="schedule-model">Model</label>
      <ModelSelect id="schedule-model" value={model} onChange={setModel} choices={choices} />
      <label htmlFor="schedule-environment">Environment</label>
      <EnvironmentSelect
        id="schedule-environment"
        value={environment}
        onChange={setEnvironment}
        choices={choices}
      />
      <label className="inline">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        Enabled
      </label>
      <div className="actions">
        <button type="submit" className="primary">
          {schedule ? 'Save schedule' : 'Create schedule'}
        </button>
      </div>
      <ErrorMessage error={error} />
    </form>
  );
}

function ScheduleRuns({ schedule }: { schedule: Schedule }) {
  const runs = useLoad(
    () =>
      data(api.GET('/agent/runs', { params: { query: { schedule_id: schedule.id, limit: 20 } } })),
    [schedule.id],
  );
  return (
    <section aria-label={`Runs of ${schedule.name}`}>
      <h2>Runs created by {schedule.name}</h2>
      <ErrorMessage error={runs.error} />
      {runs.value && (
        <RunsTable
          runs={runs.value.runs}
          empty={<p className="muted">No runs yet: this schedule has not fired.</p>}
        />
      )}
    </section>
  );
}

const COLUMNS: Column<Schedule>[] = [
  { key: 'name', header: 'Name', primary: true, cell: (schedule) => schedule.name },
  { key: 'cron', header: 'Cron (UTC)', cell: (schedule) => <code>{schedule.cron_schedule}</code> },
  {
    key: 'state',
    header: 'State',
    cell: (schedule) => (
      <span data-testid={`schedule-state-${schedule.name}`}>
        {schedule.enabled ? 'Active' : 'Paused'}
        {schedule.last_spawn_error && <span className="error">{schedule.last_spawn_error}</span>}
      </span>
    ),
  },
  { key: 'next', header: 'Next run', cell: (s) => <Time value={s.history.next_run} /> },
  { key: 'last', header: 'Last ran', cell: (s) => <Time value={s.history.last_ran} /> },
];

export function SchedulesPage() {
  const list = useLoad(() => data(api.GET('/agent/schedules')), []);
  const [editing, setEditing] = useState<Schedule | 'new'>();
  const [chosenRuns, setShowingRuns] = useState<Schedule>();
  const [error, setError] = useState<unknown>();
  // A run's trigger link (?schedule=<id>) opens that schedule's runs.
  const linked = useRoute().query.get('schedule');
  const showingRuns = chosenRuns ?? list.value?.schedules.find((s) => s.id === linked);
  const refusal = useRefusal('schedules.write', 'create or change schedules');

  async function act(schedule: Schedule, action: 'pause' | 'resume' | 'delete') {
    setError(undefined);
    const params = { params: { path: { scheduleId: schedule.id } } };
    try {
      if (action === 'pause') await data(api.POST('/agent/schedules/{scheduleId}/pause', params));
      if (action === 'resume') await data(api.POST('/agent/schedules/{scheduleId}/resume', params));
      if (action === 'delete') await data(api.DELETE('/agent/schedules/{scheduleId}', params));
      list.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <section>
      <div className="page-head">
        <h1>Schedules</h1>
        <button
          type="button"
          className="primary"
          disabled={refusal !== null}
          onClick={() => setEditing('new')}
        >
          New schedule
        </button>
      </div>
      <RefusalNotice refusal={refusal} />
      <ErrorMessage error={list.error ?? error} />
      {editing && (
        <div className="panel">
          <h2>{editing === 'new' ? 'New schedule' : `Edit ${editing.name}`}</h2>
          <ScheduleForm
            key={editing === 'new' ? 'new' : editing.id}
            schedule={editing === 'new' ? undefined : editing}
            onSaved={() => {
              setEditing(undefined);
              list.reload();
            }}
          />
          <button type="button" onClick={() => setEditing(undefined)}>
            Close
          </button>
        </div>
      )}
      {list.value && (
        <DataTable
          label="Schedules"
          rows={list.value.schedules}
          rowKey={(schedule) => schedule.id}
          selected={showingRuns?.id ?? ''}
          columns={[
            ...COLUMNS,
            {
              key: 'actions',
              header: 'Actions',
              hiddenHeader: true,
              cell: (schedule) => (
                <div className="actions compact">
                  <button
                    type="button"
                    disabled={refusal !== null}
                    aria-label={`${schedule.enabled ? 'Pause' : 'Resume'} ${schedule.name}`}
                    onClick={() => act(schedule, schedule.enabled ? 'pause' : 'resume')}
                  >
                    {schedule.enabled ? 'Pause' : 'Resume'}
                  </button>
                  <button
                    type="button"
                    disabled={refusal !== null}
                    aria-label={`Edit ${schedule.name}`}
                    onClick={() => setEditing(schedule)}
                  >
                    Edit
                  </button>
                  <button
                    type="button"
                    aria-label={`Runs of ${schedule.name}`}
                    onClick={() => setShowingRuns(schedule)}
                  >
                    Runs
                  </button>
                  {refusal === null && (
                    <ConfirmButton
                      label="Delete"
                      question={`Delete the schedule ${schedule.name}?`}
                      confirm="Delete"
                      className="danger"
                      onConfirm={() => act(schedule, 'delete')}
                    />
                  )}
                </div>
              ),
            },
          ]}
          empty={
            <p>
              <strong>No schedules yet.</strong> A schedule starts a run with its prompt at the
              times its cron expression names.
            </p>
          }
        />
      )}
      {showingRuns && <ScheduleRuns key={showingRuns.id} schedule={showingRuns} />}
    </section>
  );
}
