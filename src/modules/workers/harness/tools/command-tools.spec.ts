import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openProcessSandbox } from '../../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { runCommandTool } from './command-tools';
import { ExecutionTimeline, type RecordedEvent } from '../execution-timeline';
import type { ToolScope } from './tool.types';

jest.setTimeout(30_000);

describe('run_command on the timeline', () => {
  let root: string;
  let sandbox: Sandbox;
  let events: { type: string; payload: Record<string, unknown> }[];

  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'ambient-cmd-tool-'));
    sandbox = await openProcessSandbox(root);
    events = [];
  });
  afterEach(async () => {
    await sandbox.close();
    rmSync(root, { recursive: true, force: true });
  });

  const scope = (emit = true): ToolScope => ({
    workspaceDir: root,
    sandbox,
    commandEnv: { PATH: '/usr/bin:/bin' },
    commandTimeoutSeconds: 10,
    signal: new AbortController().signal,
    mode: 'normal',
    ...(emit
      ? {
          emitEvent: async (type: string, payload: Record<string, unknown> = {}) =>
            void events.push({ type, payload }),
        }
      : {}),
  });

  it('records its start, its output as it comes and its end, all under one command id', async () => {
    const outcome = await runCommandTool.run({ command: 'echo building; exit 2' }, scope());
    expect(JSON.parse(outcome.content)).toMatchObject({ exit_code: 2, output: 'building\n' });
    expect(events.map((e) => e.type)).toEqual([
      'command_started',
      'command_output',
      'command_finished',
    ]);
    const [started, output, finished] = events;
    expect(started.payload).toEqual({
      command_id: expect.stringMatching(/^[A-Za-z0-9]{12}$/),
      command: 'echo building; exit 2',
    });
    const id = started.payload.command_id;
    expect(output.payload).toEqual({ command_id: id, seq: 0, text: 'building\n' });
    expect(finished.payload).toEqual({
      command_id: id,
      exit_code: 2,
      timed_out: false,
      duration_ms: expect.any(Number),
    });
  });

  it('runs the command even when its events cannot be recorded', async () => {
    const failing: ToolScope = {
      ...scope(false),
      emitEvent: async () => {
        throw new Error('the database is away');
      },
    };
    const outcome = await runCommandTool.run({ command: 'echo still-ran' }, failing);
    expect(JSON.parse(outcome.content)).toMatchObject({ exit_code: 0, output: 'still-ran\n' });
  });

  it('records nothing where the execution has no timeline', async () => {
    const outcome = await runCommandTool.run({ command: 'echo quiet' }, scope(false));
    expect(JSON.parse(outcome.content)).toMatchObject({ exit_code: 0, output: 'quiet\n' });
    expect(events).toEqual([]);
  });

  describe('where the execution holds its events to write them together', () => {
    /** The execution's timeline over a recording writer; its holds last `holdMs`. */
    const holding = (
      holdMs: number,
      onWrite: (events: RecordedEvent[]) => void = () => undefined,
    ) => {
      const writes: RecordedEvent[][] = [];
      const timeline = new ExecutionTimeline(async (events) => {
        writes.push(events);
        onWrite(events);
      });
      const scoped: ToolScope = {
        ...scope(false),
        emitEvent: timeline.emit,
        holdEvents: () => timeline.hold(holdMs),
      };
      return { writes, scoped };
    };

    it('records a command’s start, output and end in one write when it ends within the hold', async () => {
      const { writes, scoped } = holding(60_000);
      const outcome = await runCommandTool.run({ command: 'echo quick' }, scoped);
      expect(JSON.parse(outcome.content)).toMatchObject({ exit_code: 0, output: 'quick\n' });
      expect(writes.map((w) => w.map((e) => e.eventType))).toEqual([
        ['command_started', 'command_output', 'command_finished'],
      ]);
      const [started, output, finished] = writes[0];
      expect(output.payload).toEqual({
        command_id: started.payload!.command_id,
        seq: 0,
        text: 'quick\n',
      });
      expect(finished.occurredAt.getTime()).toBeGreaterThanOrEqual(started.occurredAt.getTime());
    });

    it('records a longer command’s start while it still runs', async () => {
      // The command ends only once its start was written: held to its end, it would hang.
      const { writes, scoped } = holding(50, (events) => {
        if (events.some((e) => e.eventType === 'command_started')) {
          writeFileSync(join(root, 'started-recorded'), '');
        }
      });
      const outcome = await runCommandTool.run(
        { command: 'while [ ! -f started-recorded ]; do sleep 0.01; done; echo after' },
        scoped,
      );
      expect(JSON.parse(outcome.content)).toMatchObject({ exit_code: 0, output: 'after\n' });
      expect(writes[0].map((e) => e.eventType)).toEqual(['command_started']);
      expect(writes.flat().map((e) => e.eventType)).toEqual([
        'command_started',
        'command_output',
        'command_finished',
      ]);
    });

    it('runs the command even when its events cannot be recorded', async () => {
      const timeline = new ExecutionTimeline(async () => {
        throw new Error('the database is away');
      });
      const failing: ToolScope = {
        ...scope(false),
        emitEvent: timeline.emit,
        holdEvents: () => timeline.hold(60_000),
      };
      const outcome = await runCommandTool.run({ command: 'echo still-ran' }, failing);
      expect(JSON.parse(outcome.content)).toMatchObject({ exit_code: 0, output: 'still-ran\n' });
    });
  });
});
