import { LoggedRun, runLogLine } from './run-log-lines';

const run = (over: Partial<LoggedRun> = {}): LoggedRun => ({
  id: 'run-1',
  teamId: 'team-1',
  modelId: 'fake-model',
  executionCount: 2,
  statusMessage: null,
  requestUsage: null,
  createdAt: new Date('2026-11-26T00:00:00.000Z'),
  startedAt: new Date('2026-11-26T00:00:01.000Z'),
  updatedAt: new Date('2026-11-26T00:00:03.500Z'),
  ...over,
});

describe('runLogLine', () => {
  it('starts with the model and the execution', () => {
    expect(runLogLine('INPROGRESS', run())).toEqual({
      msg: 'run started',
      run_id: 'run-1',
      team_id: 'team-1',
      model: 'fake-model',
      execution_id: 2,
    });
  });

  it('ends with state, duration from the start and inference + compute cost', () => {
    const line = runLogLine(
      'SUCCEEDED',
      run({ requestUsage: { inference_cost_usd: 0.0012, compute_cost_usd: 0.0003 } }),
    );
    expect(line).toEqual({
      msg: 'run ended',
      run_id: 'run-1',
      team_id: 'team-1',
      state: 'SUCCEEDED',
      model: 'fake-model',
      duration_ms: 2500,
      cost_usd: 0.0015,
    });
  });

  it('gives a failure its code and message, and a run that never started its time since creation', () => {
    const line = runLogLine(
      'ERROR',
      run({
        startedAt: null,
        statusMessage: { message: 'no sandbox', error_code: 'resource_unavailable' },
      }),
    );
    expect(line).toMatchObject({
      state: 'ERROR',
      duration_ms: 3500,
      cost_usd: 0,
      error_code: 'resource_unavailable',
      status_message: 'no sandbox',
    });
  });

  it('writes nothing for the states in between', () => {
    expect(runLogLine('CLAIMED', run())).toBeNull();
    expect(runLogLine('QUEUED', run())).toBeNull();
  });
});
