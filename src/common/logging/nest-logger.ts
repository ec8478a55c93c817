import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'pino';
import { currentLogBindings } from './log-bindings';

/**
 * Nest's start-up chatter (one line per module, controller and route): kept at debug, so a
 * normal start prints Ambient's own summary instead of some 150 lines.
 */
const CHATTY_CONTEXTS = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * Nest's LoggerService on pino: `new Logger('Context')` calls anywhere in Ambient end up here,
 * with the context as a field and the bindings of the current request or run (request_id,
 * run_id) on every line.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, ...params: unknown[]): void {
    const context = contextOf(params);
    this.write(context && CHATTY_CONTEXTS.has(context) ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = { ...currentLogBindings() };
    const context = contextOf(params);
    if (context) fields.context = context;
    // Nest's exception handlers pass (message, stack, context).
    const stack = params.find((p): p is string => typeof p === 'string' && /\n\s+at /.test(p));
    if (message instanceof Error) {
      fields.err = message;
      this.logger[level](fields, message.message);
    } else if (message !== null && typeof message === 'object') {
      const { msg, ...rest } = message as Record<string, unknown>;
      this.logger[level]({ ...fields, ...rest }, typeof msg === 'string' ? msg : '');
    } else {
      if (stack) fields.stack = stack;
      this.logger[level](fields, String(message));
    }
  }
}

/** Nest passes the context as the last string parameter. */
function contextOf(params: unknown[]): string | undefined {
  const last = params[params.length - 1];
  return typeof last === 'string' && !/\n\s+at /.test(last) ? last : undefined;
}
