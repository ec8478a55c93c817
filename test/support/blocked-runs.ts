import { randomUUID } from 'node:crypto';
import { RunTransitions } from '../../src/modules/runs/run-transitions.service';
import type { TestApp } from './test-app';

export interface TestRequest {
  kind?: 'approval' | 'question';
  tool?: string;
  arguments?: Record<string, unknown>;
  rule?: Record<string, unknown> | null;
  summary?: string;
}

/**
 * For API-level specs on an api-only app (no worker, so no harness asks): moves a run to BLOCKED
 * with the given requests the way RunBlocking does when a harness ends `blocked` (the request
 * rows and the guarded INPROGRESS → BLOCKED transition in one transaction), marking the queued
 * run INPROGRESS first as a worker's claim would. Specs with a worker let the built-in harness
 * ask for real (approvals-capacity, approvals-expiry, approvals-sandbox). Returns the request ids.
 */
export async function blockRunAsHarnessWould(
  app: TestApp,
  runId: string,
  requests: TestRequest[] = [{}],
): Promise<string[]> {
  await app.dataSource.query(
    `UPDATE runs SET state = 'INPROGRESS', execution_count = execution_count + 1,
            started_at = COALESCE(started_at, NOW(3))
      WHERE id = ? AND state IN ('QUEUED', 'CLAIMED')`,
    [runId],
  );
  const ids = requests.map(() => randomUUID());
  const blocked = await app.dataSource.transaction(async (manager) => {
    const [run] = (await manager.query(
      `SELECT team_id, execution_count FROM runs WHERE id = ? FOR UPDATE`,
      [runId],
    )) as { team_id: string; execution_count: number }[];
    for (const [i, request] of requests.entries()) {
      const kind = request.kind ?? 'approval';
      await manager.query(
        `INSERT INTO run_approvals (id, run_id, team_id, execution_id, kind, tool, tool_call_id,
                                    arguments, rule, summary, requested_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NOW(3) + INTERVAL ? MICROSECOND)`,
        [
          ids[i],
          runId,
          run.team_id,
          run.execution_count,
          kind,
          request.tool ?? (kind === 'question' ? 'ask_user' : 'run_command'),
          `call_${i}`,
          JSON.stringify(
            request.arguments ??
              (kind === 'question' ? { question: 'Which branch?' } : { command: 'git push' }),
          ),
          kind === 'question'
            ? null
            : JSON.stringify(request.rule ?? { command: '^git push', effect: 'ask' }),
          request.summary ?? (kind === 'question' ? 'Which branch?' : 'run `git push`'),
          // Two inserts often fall in one millisecond, and the list orders by requested_at:
          // later requests are a millisecond later, as when a harness asks one block after another.
          i * 1000,
        ],
      );
    }
    const summary = requests[0].summary ?? 'run `git push`';
    return app.ambient.app.get(RunTransitions).transition(
      runId,
      'BLOCKED',
      {
        from: ['INPROGRESS'],
        set: {
          leaseOwner: null,
          leaseExpiresAt: null,
          statusMessage: { message: `Waiting for approval: ${summary}` },
        },
        event: { executionId: run.execution_count, payload: { approval_ids: ids } },
      },
      manager,
    );
  });
  if (!blocked) throw new Error(`run ${runId} could not be moved to BLOCKED`);
  return ids;
}
