import { startFakeModelServer, type FakeStep } from '../test/fixtures/fake-model-server';

/**
 * The benches' model server in a process of its own (forked by model-server-client.ts), so that
 * answering the model calls is not counted as the CPU of the service that makes them: the tests'
 * fake model server on an ephemeral port, scripted and read over IPC.
 */

export type ModelServerOrder = { id: number } & (
  | { op: 'script'; scripts: [name: string, steps: FakeStep[]][] }
  | { op: 'scriptPrompt'; pattern: string; steps: FakeStep[] }
  | { op: 'requests'; prefix: string }
  | { op: 'cpu' }
);

/** A request the server received: its script and step, and when (ms since the epoch). */
export interface ReceivedRequest {
  script: string | undefined;
  step: number;
  receivedAt: number;
}

async function main(): Promise<void> {
  const model = await startFakeModelServer();
  const answer = (order: ModelServerOrder): unknown => {
    switch (order.op) {
      case 'script':
        for (const [name, steps] of order.scripts) model.script(name, steps);
        return null;
      case 'scriptPrompt':
        model.scriptPrompt(new RegExp(order.pattern), order.steps);
        return null;
      case 'requests':
        return model.requests
          .filter(({ script }) => (script ?? '').startsWith(order.prefix))
          .map(({ script, step, receivedAt }) => ({
            script,
            step,
            receivedAt: performance.timeOrigin + receivedAt,
          }));
      case 'cpu':
        return process.cpuUsage();
    }
  };
  process.on('message', (order: ModelServerOrder) =>
    process.send?.({ id: order.id, answer: answer(order) }),
  );
  process.on('disconnect', () => void model.close().finally(() => process.exit(0)));
  process.send?.({ url: model.url });
}

void main();
