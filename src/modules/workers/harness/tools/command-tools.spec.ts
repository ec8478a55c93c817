import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openProcessSandbox } from '../../sandbox/backends/process/process-sandbox';
import type { Sandbox } from '../../sandbox/sandbox.types';
import { runCommandTool } from './command-tools';
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
});
