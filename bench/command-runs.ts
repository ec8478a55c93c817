import type { Connection } from 'mysql2/promise';
import type { FakeModelServer } from '../test/fixtures/fake-model-server';
import type { apiClient } from '../test/support/api-client';

export interface CommandRunsOrder {
  api: ReturnType<typeof apiClient>;
  model: FakeModelServer;
  /** A connection of the bench's own, to follow the runs' states. */
  db: Connection;
  /** Names the runs' model scripts (`<name>-<i>`). */
  name: string;
  count: number;
  /** How long the model thinks before each answer. */
  thinkMs: number;
  command: string;
  /** The prompt of a run, which must carry `[script:<script>]`. */
  prompt?: (script: string) => string;
  finalText?: string;
}

const ENDED = `'SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'`;

/**
 * `count` runs shaped as `bench:density`'s, created at once: a model turn asking for `command`,
 * then a turn that ends the run. Resolves once every one ended, with how many succeeded; throws
 * after 120 s.
 */
export async function commandRuns(order: CommandRunsOrder): Promise<{ succeeded: number }> {
  const { api, model, db, name, count, thinkMs, command } = order;
  const ids = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const script = `${name}-${i}`;
      model.script(script, [
        {
          delayMs: thinkMs,
          then: { toolCalls: [{ name: 'run_command', arguments: { command } }] },
        },
        { delayMs: thinkMs, then: { text: order.finalText ?? 'done' } },
      ]);
      const prompt = order.prompt?.(script) ?? `[script:${script}]`;
      const created = await api.post('/agent/runs', { prompt });
      if (created.status >= 300) throw new Error(`POST /agent/runs: ${created.status}`);
      return created.body.run_id as string;
    }),
  );
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const [rows] = (await db.query(
      `SELECT COUNT(*) AS n, COALESCE(SUM(state = 'SUCCEEDED'), 0) AS ok FROM runs
        WHERE id IN (?) AND state IN (${ENDED})`,
      [ids],
    )) as unknown as [{ n: number | string; ok: number | string }[]];
    if (Number(rows[0].n) === count) return { succeeded: Number(rows[0].ok) };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${name}: the runs did not end within 120 s`);
}
