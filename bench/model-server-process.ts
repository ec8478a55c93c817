import {
  startFakeModelServer,
  type FakeStep,
  type RecordedRequest,
} from '../test/fixtures/fake-model-server';

/**
 * The benches' model server in a process of its own (forked by model-server-client.ts), so that
 * answering the model calls is not counted as the CPU of the service that makes them: the tests'
 * fake model server on an ephemeral port, scripted and read over IPC.
 */

export type ModelServerOrder = { id: number } & (
  | { op: 'script'; scripts: [name: string, steps: FakeStep[]][] }
  | { op: 'scriptPrompt'; pattern: string; steps: FakeStep[] }
  | { op: 'requests'; prefix: string }
  | { op: 'awaitRequest'; script: string; step: number; timeoutMs: number }
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
  const received = (r: RecordedRequest): ReceivedRequest => ({
    script: r.script,
    step: r.step,
    receivedAt: performance.timeOrigin + r.receivedAt,
  });
  /** The request of `script`'s `step` once it arrived, looked for every millisecond here. */
  const arrival = (order: { script: string; step: number; timeoutMs: number }) =>
    new Promise<ReceivedRequest | null>((resolve) => {
      const deadline = performance.now() + order.timeoutMs;
      const look = (): void => {
        const found = model.requests.find(
          (r) => r.script === order.script && r.step === order.step,
        );
        if (found) resolve(received(found));
        else if (performance.now() > deadline) resolve(null);
        else setTimeout(look, 1);
      };
      look();
    });
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
          .map(received);
      case 'awaitRequest':
        return arrival(order);
      case 'cpu':
        return process.cpuUsage();
    }
  };
  process.on('message', (order: ModelServerOrder) => {
    void Promise.resolve(answer(order)).then((answered) =>
      process.send?.({ id: order.id, answer: answered }),
    );
  });
  process.on('disconnect', () => void model.close().finally(() => process.exit(0)));
  process.send?.({ url: model.url });
}

void main();
