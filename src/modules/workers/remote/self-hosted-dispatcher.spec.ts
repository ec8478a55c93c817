import { WebSocket } from 'ws';
import { fake } from '../../../../test/support/unit/fake';
import type { Run, RunSignals } from '../../runs';
import type { WorkerCredentialsService } from './credentials/worker-credentials.service';
import { SelfHostedDispatcher } from './self-hosted-dispatcher.service';
import type { Offer, SelfHostedRuns } from './self-hosted-runs.service';
import { WorkerConnection } from './worker-connection';
import type { ServerMessage } from './worker-protocol';

const TEAM = 'team-1';
const HOST = 'box';

/** A worker connection whose socket records what the server sends. */
function connection(): { conn: WorkerConnection; sent: ServerMessage[] } {
  const sent: ServerMessage[] = [];
  const socket = {
    readyState: WebSocket.OPEN,
    send: (text: string, done: (err?: Error) => void) => {
      sent.push(JSON.parse(text) as ServerMessage);
      done();
    },
  } as unknown as WebSocket;
  return { conn: new WorkerConnection('c1', TEAM, HOST, 'cred-1', socket), sent };
}

function queuedRun(executionCount: number): Run {
  return {
    id: 'run-1',
    teamId: TEAM,
    workerHost: HOST,
    executionCount,
    title: 'Go',
    prompt: 'Go',
    config: {},
    createdAt: new Date(0),
    updatedAt: new Date(0),
    conversationId: 'conv-1',
  } as unknown as Run;
}

function offerOf(run: Run): Offer {
  const executionId = run.executionCount + 1;
  return {
    runId: run.id,
    executionId,
    keyId: `k${executionId}`,
    leaseOwner: `key:k${executionId}`,
    key: `amb_${executionId}`,
  };
}

/** Worker credentials as the dispatcher sees them: `cred-1` live unless said otherwise. */
function liveCredentials(live = true) {
  const credentials = fake<WorkerCredentialsService>();
  credentials.stillValid.mockResolvedValue(new Set(live ? ['cred-1'] : []));
  return credentials;
}

describe('SelfHostedDispatcher', () => {
  it("does not offer a run to a connection still running one of its executions; the execution's end signal stays its own", async () => {
    const runs = fake<SelfHostedRuns>();
    const dispatcher = new SelfHostedDispatcher(runs, fake<RunSignals>(), liveCredentials());
    const { conn, sent } = connection();
    dispatcher.add(conn);

    // Execution 1 is offered and claimed.
    runs.queued.mockResolvedValue([queuedRun(0)]);
    runs.offer.mockImplementation(async (run) => offerOf(run));
    runs.claim.mockResolvedValue(true);
    await dispatcher.dispatch(TEAM, HOST);
    expect(sent.map((m) => m.type)).toEqual(['task_assignment']);
    await dispatcher.handle(conn, { type: 'task_claimed', data: { task_id: 'run-1' } });

    // The run ended through the run-scoped API and a follow-up queued it again, while the worker
    // has not yet said that execution 1 is over: no offer to this connection.
    runs.queued.mockResolvedValue([queuedRun(1)]);
    await dispatcher.dispatch(TEAM, HOST);
    expect(runs.offer).toHaveBeenCalledTimes(1);
    expect(sent).toHaveLength(1);

    // Execution 1's end signal is applied to execution 1's lease; then execution 2 is offered.
    runs.queued.mockResolvedValueOnce([queuedRun(1)]).mockResolvedValue([]);
    await dispatcher.handle(conn, { type: 'task_completed', data: { task_id: 'run-1' } });
    expect(runs.applyWorkerReport).toHaveBeenCalledWith('run-1', 'key:k1', {
      kind: 'completed',
      message: undefined,
      taskState: undefined,
    });
    await dispatcher.dispatch(TEAM, HOST);
    expect(sent.map((m) => m.type)).toEqual(['task_assignment', 'task_assignment']);
    expect(sent[1]).toMatchObject({ data: { task_id: 'run-1', execution_id: '2' } });
    expect(conn.tasks.get('run-1')).toMatchObject({ leaseOwner: 'key:k2', claimed: false });
  });
  it('withdraws an offer whose credential was revoked while its key was made, and sends nothing', async () => {
    const runs = fake<SelfHostedRuns>();
    const dispatcher = new SelfHostedDispatcher(runs, fake<RunSignals>(), liveCredentials(false));
    const { conn, sent } = connection();
    dispatcher.add(conn);
    runs.queued.mockResolvedValue([queuedRun(0)]);
    runs.offer.mockImplementation(async (run) => offerOf(run));
    runs.withdrawOffer.mockResolvedValue(true);

    await dispatcher.dispatch(TEAM, HOST);
    expect(runs.offer).toHaveBeenCalledWith(expect.objectContaining({ id: 'run-1' }), 'cred-1');
    expect(runs.withdrawOffer).toHaveBeenCalledWith('run-1', 'key:k1');
    expect(sent).toEqual([]);
  });
});
