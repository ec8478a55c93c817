import { startFakeModelServer } from '../test/fixtures/fake-model-server';

/**
 * bench:model-calls' model server, in a process of its own so that its CPU is not counted as the
 * client's: the fake model server on an ephemeral port, its URL sent to the parent over IPC.
 * Every request is answered with a tool call (a script of one step), as a run's first turn is.
 */
async function main(): Promise<void> {
  const model = await startFakeModelServer();
  const step = { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi' } }] };
  model.scriptPrompt(/./, [step, step, step, step, step, step, step, step]);
  process.on('disconnect', () => void model.close().finally(() => process.exit(0)));
  process.send?.({ url: model.url });
}

void main();
