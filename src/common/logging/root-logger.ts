import pino, { DestinationStream, Logger } from 'pino';
import type { AppConfig, LogFormat } from '../../config/app-config';

const FLUSH_MS = 200;
/** Lines are written in batches of this many bytes (one write(2) for many requests). */
const BATCH_BYTES = 4096;

/**
 * Where JSON lines go asynchronously in batches of BATCH_BYTES: stdout (1) in production, or a
 * file (a benchmark measuring logging on writes what production writes, the same way).
 * Flushed at process exit; the caller flushes it periodically if a quiet process must show its
 * lines at once.
 */
export function batchedLogDestination(dest: number | string) {
  return pino.destination({ dest, sync: false, minLength: BATCH_BYTES, mkdir: dest !== 1 });
}

export interface RootLogger {
  logger: Logger;
  /** Writes out what is still buffered (before the process exits). */
  flush(): void;
}

/** The format of `log.format`, or by whether stdout is a terminal when it is unset. */
export function logFormatOf(
  config: AppConfig,
  stdoutIsTty = Boolean(process.stdout.isTTY),
): LogFormat {
  return config.log.format ?? (stdoutIsTty ? 'pretty' : 'json');
}

/** One line per entry on a terminal: `[Context] message`, a request's essentials, its ids. */
function prettyLine(log: Record<string, unknown>, messageKey: string): string {
  const parts = [
    typeof log.context === 'string' ? `[${log.context}]` : '',
    String(log[messageKey] ?? ''),
    typeof log.method === 'string'
      ? `${log.method} ${log.path} ${log.status_code} ${log.duration_ms}ms`
      : '',
    typeof log.run_id === 'string' ? `run_id=${log.run_id}` : '',
    typeof log.request_id === 'string' ? `request_id=${log.request_id}` : '',
  ];
  return parts.filter(Boolean).join(' ');
}

/**
 * One pino logger per Ambient process, on stdout. JSON lines are written asynchronously (a
 * buffered stream, flushed at exit), so a request never waits on the terminal or the collector;
 * the pretty format loads pino-pretty only when asked for.
 */
export function createRootLogger(config: AppConfig, destination?: DestinationStream): RootLogger {
  const format = logFormatOf(config);
  const options: pino.LoggerOptions = {
    level: config.log.level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (destination) return { logger: pino(options, destination), flush: () => undefined };
  if (format === 'pretty') {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pretty = require('pino-pretty') as typeof import('pino-pretty');
    const stream = pretty({
      sync: true,
      colorize: Boolean(process.stdout.isTTY),
      ignore: 'pid,hostname,context,startup,method,path,status_code,duration_ms,request_id,run_id',
      translateTime: 'SYS:HH:MM:ss.l',
      messageFormat: prettyLine,
    });
    return { logger: pino(options, stream), flush: () => undefined };
  }
  // At least every FLUSH_MS, so a quiet process still shows its lines at once.
  const stream = batchedLogDestination(1);
  const timer = setInterval(() => stream.flush(), FLUSH_MS).unref();
  return {
    logger: pino(options, stream),
    flush: () => {
      clearInterval(timer);
      try {
        stream.flushSync();
      } catch {
        // Nothing written yet, or stdout already closed.
      }
    },
  };
}
