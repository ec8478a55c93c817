import 'reflect-metadata';
// First: tracing must be running before the modules it instruments load.
import { tracing } from './bootstrap/start-tracing';
import { Logger } from '@nestjs/common';
import { AppConfig, loadConfig } from './config/app-config';
import { describeCreatedKeys, KeyOrigin, provideKeys } from './config/key-files';
import { startAmbient } from './bootstrap/start';
import { modelWarning, startupSummary } from './bootstrap/startup-summary';

function fail(message: string): never {
  process.stderr.write(`ambient: ${message}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let config: AppConfig;
  let keys: KeyOrigin[];
  try {
    config = loadConfig();
    keys = provideKeys(config, process.env, 'create');
  } catch (err) {
    fail((err as Error).message);
  }
  const logger = new Logger('Ambient');
  const starting = startAmbient(config).catch((err: Error) => fail(firstLine(err)));
  // Handlers go in before start-up finishes, so a SIGTERM at any moment shuts down cleanly.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: finishing in-flight work, then stopping`);
    const force = setTimeout(() => {
      logger.warn('shutdown took too long; exiting');
      process.exit(1);
    }, config.server.shutdownTimeoutMs + 10_000);
    force.unref();
    starting
      .then((ambient) => ambient.close())
      .then(() => tracing.shutdown())
      .then(
        () => process.exit(0),
        (err: Error) => {
          logger.error(`shutdown failed: ${err.message}`);
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const ambient = await starting;
  // Logged once the process logger (JSON or pretty) is in place.
  const createdKeys = describeCreatedKeys(keys);
  if (createdKeys) new Logger('Keys').warn(createdKeys);
  logger.log(startupSummary(config, ambient, keys));
  const noModel = modelWarning(ambient.models, config.models.file);
  if (noModel) new Logger('Models').warn(noModel);
}

function firstLine(err: Error): string {
  return (err.message || String(err)).split('\n')[0];
}

void main();
