import { HarnessRegistry } from '../modules/workers/harness/harness-registry';
import { WorkspaceService } from '../modules/workers/workspace/workspace.service';
import { egressServerOptions } from '../modules/workers/sandbox/egress/execution-egress';
import { Sandboxes } from '../modules/workers/sandbox/sandboxes';
import { lingeringRemovalsSettled } from '../modules/workers/sandbox/cgroup-limits';
import type { AppConfig } from '../config/app-config';
import { settlesWithin } from '../common/time';
import type { ExtensionLog } from '../extensions/extension.types';
import { loadModelCatalog } from '../modules/models/model-catalog';
import {
  AT_CAPACITY_REASON,
  encodeMessage,
  parseServerMessage,
  TaskAssignment,
  WorkerMessage,
} from '../modules/workers/remote/worker-protocol';
import { ExecutionDeps, TaskExecution } from './task-execution';
import type { WorkerOptions } from './worker-options';
import { WorkerSocket } from './worker-socket';

const SHUTDOWN_WAIT_MS = 15_000;
/** How long the start waits for the sweep of what a previous worker left before it connects. */
const SWEEP_WAIT_MS = 30_000;

/**
 * Ambient's own self-hosted worker: speaks the `oz-agent-worker` protocol, executes assigned
 * runs on this machine as Ambient's workers do (the direct backend: a workspace directory per
 * run, prepared from the run's environment, then the harness `config.harness.type` names), and
 * rejects assignments beyond `maxConcurrentTasks`.
 */
export class SelfHostedWorker {
  private readonly tasks = new Map<string, { execution: TaskExecution; done: Promise<void> }>();
  private readonly socket: WorkerSocket;
  private readonly executionDeps: ExecutionDeps;
  private stopping = false;

  constructor(
    private readonly options: WorkerOptions,
    private readonly log: (line: string) => void,
    /** Run cgroups still being removed in the background (see CgroupLimits.remove). */
    private readonly removalsSettled: () => Promise<void> = lingeringRemovalsSettled,
  ) {
    const url = new URL(options.webSocketUrl);
    url.searchParams.set('worker_id', options.workerId);
    this.socket = new WorkerSocket(
      url.toString(),
      options.credential,
      {
        onOpen: () => log(`connected to ${options.webSocketUrl} as "${options.workerId}"`),
        onMessage: (text) => this.receive(text),
        onClose: () => undefined,
      },
      log,
    );
    // The workspace service only reads the workspace root from the server's configuration.
    const workspaceConfig = { runs: { workspaceRoot: options.workspaceRoot } };
    this.executionDeps = {
      apiUrl: options.apiUrl,
      workerId: options.workerId,
      workspaces: new WorkspaceService(workspaceConfig as AppConfig),
      harnesses: new HarnessRegistry().registerAll(options.extensions.harnesses(), {
        config: options.config,
      }),
      catalog: loadModelCatalog(options.modelsFile),
      sandboxes: new Sandboxes(
        // No warm pool: a crashed worker's idle containers would wait for the next start's sweep
        // (which judges pooled ones by their maker), or for good if the worker is not started again.
        { ...options.sandbox, docker: { ...options.sandbox.docker, poolSize: 0 } },
        options.workspaceRoot,
        `self-hosted:${options.workerId}`,
        (line) => log(`warning: ${line}`),
        options.extensions.sandboxBackendRegistry().list(),
        undefined,
        // NODE_EXTRA_CA_CERTS gives the proxy a private CA upstream here (its own process).
        egressServerOptions(options.egress),
      ),
      gitUrlBase: options.gitUrlBase,
      log,
    };
  }

  get activeCount(): number {
    return this.tasks.size;
  }

  /** Starts the extensions (their init), removes what a previous worker left, then connects. */
  async start(): Promise<void> {
    const limit = this.options.maxConcurrentTasks || 'unlimited';
    this.log(`worker "${this.options.workerId}" starting (max concurrent tasks: ${limit})`);
    await this.options.extensions.start({
      config: this.options.config,
      logFor: (name) => this.extensionLog(name),
    });
    await this.sweepLeftovers();
    this.socket.start();
  }

  /**
   * What a killed worker process left on this host, as far as it can be told from a live one's:
   * run cgroups whose maker is dead (judged by its pid and start time). An execution's container
   * is always taken as live: it carries this worker id and nothing of the process that made it, and
   * workers sharing an id (on this host with another workspace root, or on another host with the
   * same daemon) must never lose a running one. Bounded, so a daemon that does not answer cannot
   * keep the worker from connecting.
   */
  private async sweepLeftovers(): Promise<void> {
    let removed = 0;
    const sweeping = this.executionDeps.sandboxes
      .sweep(() => Promise.resolve(true))
      .then((n) => (removed = n))
      .catch((err: Error) =>
        this.log(`warning: sweeping sandboxes a previous worker left failed: ${err.message}`),
      );
    if (!(await settlesWithin(sweeping, SWEEP_WAIT_MS))) {
      this.log('warning: stopped waiting for the sweep of what a previous worker left');
    }
    if (removed) this.log(`removed ${removed} sandbox(es) a previous worker process left`);
  }

  /** Stops taking work, hands running tasks back to the server, then closes the connection. */
  async shutdown(): Promise<void> {
    this.stopping = true;
    for (const { execution } of this.tasks.values()) execution.stop('shutdown');
    await settlesWithin(Promise.all([...this.tasks.values()].map((t) => t.done)), SHUTDOWN_WAIT_MS);
    // Closed sandboxes' containers and run cgroups are removed in the background: now, as the
    // next start's sweep takes only cgroups. Bounded: a stuck removal must not hold the exit.
    await this.executionDeps.sandboxes.drain();
    if (!(await settlesWithin(this.removalsSettled(), SHUTDOWN_WAIT_MS))) {
      this.log(
        'warning: stopped waiting for run cgroups being removed: the next start sweeps them',
      );
    }
    await this.socket.stop();
    await this.options.extensions.stop();
  }

  private extensionLog(name: string): ExtensionLog {
    const line = (level: string) => (message: string) =>
      this.log(`${level}extension ${name}: ${message}`);
    return { info: line(''), warn: line('warning: '), error: line('error: ') };
  }

  private receive(text: string): void {
    const parsed = parseServerMessage(text);
    if ('ignored' in parsed) return this.log(`message ignored: ${parsed.ignored}`);
    const { message } = parsed;
    if (message.type === 'task_cancellation') {
      const task = this.tasks.get(message.data.task_id);
      if (!task) return this.log(`task_cancellation for unknown task ${message.data.task_id}`);
      this.log(`task ${message.data.task_id}: cancellation received`);
      task.execution.stop('cancelled');
      return;
    }
    this.assign(message.data);
  }

  private assign(assignment: TaskAssignment): void {
    const runId = assignment.task_id;
    const limit = this.options.maxConcurrentTasks;
    if (this.stopping || (limit > 0 && this.tasks.size >= limit) || this.tasks.has(runId)) {
      const reason = this.stopping
        ? 'worker shutting down'
        : this.tasks.has(runId)
          ? 'task already running on this worker'
          : AT_CAPACITY_REASON;
      this.log(`rejected task ${runId}: ${reason}`);
      this.send({ type: 'task_rejected', data: { task_id: runId, reason } });
      return;
    }
    this.send({ type: 'task_claimed', data: { task_id: runId, worker_id: this.options.workerId } });
    this.log(`claimed task ${runId} (execution ${assignment.execution_id ?? '?'})`);
    const execution = new TaskExecution(assignment, this.executionDeps);
    const done = execution.run().then(
      (end) => {
        this.log(`task ${runId} ended: ${end.type} ${end.data.message}`);
        this.send(end);
      },
      (err: Error) => {
        this.log(`task ${runId} crashed: ${err.stack ?? err.message}`);
        this.send({
          type: 'task_failed',
          data: { task_id: runId, message: err.message, failure_cause: 'runtime_crash' },
        });
      },
    );
    this.tasks.set(runId, { execution, done: done.finally(() => this.tasks.delete(runId)) });
  }

  private send(message: WorkerMessage): void {
    if (!this.socket.send(encodeMessage(message))) {
      this.log(`not connected: ${message.type} for ${message.data.task_id} not sent`);
    }
  }
}
