import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

interface Delivery {
  event: string;
  payload: { data: { run: { id: string; state: string }; approval?: { decision: string } } };
}

/** Long enough for a sandbox on a machine running other suites. */
const SLOW = { timeoutMs: 120_000 };

/**
 * AMBIENT_BLOCKED_TIMEOUT (api + worker, the built-in harness): a BLOCKED run nobody decides
 * fails with `approval_timeout`, its request denied by Ambient, announced as `run.failed` and
 * `approval.decided`; a follow-up then continues it, and the agent is told nobody approved.
 */
describe('approvals: blocked runs expire (api + worker)', () => {
  const { api, model } = useTestApp('approvals_expiry', ['api', 'worker'], {
    'runs.blockedTimeoutSeconds': 2,
    'egress.allow': '127.0.0.1:9',
  });

  it('fails a run blocked longer than the timeout with approval_timeout, denying its request', async () => {
    const endpoint = await api.post('/notification-endpoints', {
      url: 'http://127.0.0.1:9/hook',
      events: ['run.failed', 'approval.decided'],
    });
    expect(endpoint.status).toBe(201);
    model.script('expiring', [
      { toolCalls: [{ name: 'run_command', arguments: { command: './deploy.sh' } }] },
      { text: 'Understood, not deployed.' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'Deploy [script:expiring]',
      config: { approvals: [{ command: 'deploy', effect: 'ask' }] },
    });
    const runId = created.body.run_id as string;
    await waitFor(
      () => api.runState(runId),
      (s) => !['QUEUED', 'CLAIMED', 'INPROGRESS'].includes(s),
      { ...SLOW, what: 'the run to ask' },
    );
    const [{ id: requestId }] = (await api.get(`/agent/runs/${runId}/approvals`)).body.approvals;

    const failed = await waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => run.state !== 'BLOCKED',
      { ...SLOW, what: 'the blocked run to expire' },
    );
    expect(failed).toMatchObject({
      state: 'FAILED',
      finished_at: expect.any(String),
      status_message: {
        message: expect.stringMatching(
          /^No decision within 2s on: .*\.\/deploy\.sh.*\. Send a follow-up to continue the run\.$/,
        ),
        error_code: 'approval_timeout',
        retryable: false,
      },
    });
    const [request] = (await api.get(`/agent/runs/${runId}/approvals`)).body.approvals;
    expect(request).toMatchObject({
      id: requestId,
      decision: 'deny',
      comment: 'nobody decided within 2s (AMBIENT_BLOCKED_TIMEOUT)',
      decided_by: { type: 'system', id: null, name: 'Ambient' },
    });
    const events = (await api.get(`/agent/runs/${runId}/timeline`)).body.events as {
      event_type: string;
      payload: Record<string, unknown> | null;
    }[];
    expect(events.at(-1)).toMatchObject({
      event_type: 'oz_run_failed',
      payload: { reason: 'approval_timeout', denied_approval_ids: [requestId] },
    });
    const deliveries = (await api.get(`/notification-endpoints/${endpoint.body.id}/deliveries`))
      .body.deliveries as Delivery[];
    expect(
      deliveries
        .filter((d) => d.payload.data.run.id === runId)
        .map((d) => [d.event, d.payload.data.approval?.decision ?? null])
        .sort(),
    ).toEqual([
      ['approval.decided', 'deny'],
      ['run.failed', null],
    ]);

    // A follow-up continues the failed run: the agent is told nobody approved, then reads it.
    const followup = await api.post(`/agent/runs/${runId}/followups`, { message: 'Leave it.' });
    expect(followup.body.outcome).toBe('handoff_execution');
    const ended = await waitFor(
      () => api.runState(runId),
      (s) => ['SUCCEEDED', 'FAILED', 'ERROR'].includes(s),
      { ...SLOW, what: 'the continued run to end' },
    );
    expect(ended).toBe('SUCCEEDED');
    const last = model.requests.filter((r) => r.script === 'expiring').at(-1)!;
    const told = last.body.messages.map((m) => JSON.stringify(m.content ?? '')).join('\n');
    expect(told).toContain(
      'Ambient denied this call, so it was not run. Their reason: nobody decided within 2s',
    );
    expect(told).toContain('Leave it.');
  });
});
