import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useTestApp } from './support/use-test-app';
import { waitFor } from './support/wait';

type Block = {
  type: string;
  name?: string;
  category?: string;
  state?: string;
  output?: { text?: string };
};
type Message = { role: string; content: Block[] };

describe('oz harness file tools (api + worker, fake model server)', () => {
  const { model, env, api } = useTestApp('harness_tools', ['api', 'worker']);

  const finished = (runId: string) =>
    waitFor(
      async () => (await api.get(`/agent/runs/${runId}`)).body,
      (run) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(run.state),
      { what: `run ${runId} to finish` },
    );

  const resultsOf = async (runId: string): Promise<Block[]> => {
    const conversation = await api.get(`/agent/runs/${runId}/conversation`);
    expect(conversation.status).toBe(200);
    const messages: Message[] = conversation.body.steps[0].messages;
    return messages.flatMap((m) => m.content).filter((b) => b.type === 'action_result');
  };

  it('writes, edits, reads and searches files, and the conversation shows each step', async () => {
    model.script('files', [
      {
        toolCalls: [
          {
            name: 'write_file',
            arguments: { path: 'src/greet.py', content: 'print("hello")\nprint("bye")\n' },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'src/greet.py', old_string: 'hello', new_string: 'hello, world' },
          },
        ],
      },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'src/greet.py' } }] },
      { toolCalls: [{ name: 'search_files', arguments: { pattern: 'print\\(', glob: '*.py' } }] },
      { toolCalls: [{ name: 'list_files', arguments: { recursive: true } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: '../../etc/passwd' } }] },
      { toolCalls: [{ name: 'finish', arguments: { summary: 'Greeting updated.' } }] },
    ]);
    const created = await api.post('/agent/runs', { prompt: 'Update the greeting [script:files]' });
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('SUCCEEDED');
    expect(run.status_message).toEqual({ message: 'Greeting updated.' });
    expect(readFileSync(join(env.workspaceRoot, run.run_id, 'src/greet.py'), 'utf8')).toBe(
      'print("hello, world")\nprint("bye")\n',
    );

    const results = await resultsOf(run.run_id);
    expect(results.map((r) => [r.name, r.category, r.state])).toEqual([
      ['write_file', 'files', 'completed'],
      ['edit_file', 'files', 'completed'],
      ['read_file', 'files', 'completed'],
      ['search_files', 'search', 'completed'],
      ['list_files', 'search', 'completed'],
      ['read_file', 'files', 'failed'],
      ['finish', 'review', 'completed'],
    ]);
    expect(results[2].output?.text).toBe('     1\tprint("hello, world")\n     2\tprint("bye")\n');
    expect(results[3].output?.text).toBe(
      'src/greet.py:1: print("hello, world")\nsrc/greet.py:2: print("bye")',
    );
    expect(results[4].output?.text).toContain('src/greet.py');
    expect(results[5].output?.text).toMatch(/^Error: .*outside the workspace/);
  });

  it('refuses write tools in plan mode with a tool result the model can read', async () => {
    model.script('plan', [
      { toolCalls: [{ name: 'write_file', arguments: { path: 'plan.md', content: '# Plan' } }] },
      { text: '1. Do it.' },
    ]);
    const created = await api.post('/agent/runs', {
      prompt: 'Plan the change [script:plan]',
      mode: 'plan',
    });
    expect(created.status).toBe(200);
    const run = await finished(created.body.run_id);
    expect(run.state).toBe('SUCCEEDED');
    expect(existsSync(join(env.workspaceRoot, run.run_id, 'plan.md'))).toBe(false);
    const [refused] = await resultsOf(run.run_id);
    expect(refused).toMatchObject({ name: 'write_file', state: 'denied' });
    expect(refused.output?.text).toMatch(/^Denied: write_file is not available in plan mode/);
  });
});
