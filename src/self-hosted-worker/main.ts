import 'reflect-metadata';
import { OptionsError, parseWorkerOptions, USAGE, WorkerOptions } from './worker-options';
import { SelfHostedWorker } from './self-hosted-worker';

/** `npm run worker:self-hosted -- --api-url … --worker-id … --worker-credential …` */
function main(): void {
  let options: WorkerOptions | 'help';
  try {
    options = parseWorkerOptions(process.argv.slice(2));
  } catch (err) {
    const why = err instanceof OptionsError ? err.message : String(err);
    process.stderr.write(`ambient-worker: ${why}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);
  let worker: SelfHostedWorker;
  try {
    worker = new SelfHostedWorker(options, log);
  } catch (err) {
    process.stderr.write(`ambient-worker: ${(err as Error).message}\n`);
    process.exit(1);
  }
  worker.start().catch((err: Error) => {
    process.stderr.write(`ambient-worker: ${err.message}\n`);
    process.exit(1);
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: handing ${worker.activeCount} running task(s) back, then stopping`);
    worker.shutdown().then(
      () => process.exit(0),
      (err: Error) => {
        log(`shutdown failed: ${err.message}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
