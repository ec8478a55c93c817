import { loadConfig, Role } from '../config/app-config';
import { tracingEnabled } from '../config/tracing-enabled';

export interface Tracing {
  /** Ends the SDK, flushing the spans not exported yet (no-op when tracing is off). */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { shutdown: async () => undefined };

/**
 * Starts OpenTelemetry when enabled. Must run before Nest, express, mysql2 and ioredis are
 * required: the instrumentations patch those modules as they load. When tracing is off the SDK
 * is never required, so it costs nothing.
 */
export function startTracing(env: NodeJS.ProcessEnv = process.env): Tracing {
  if (!tracingEnabled(env)) return OFF;
  // Required, not imported: without an endpoint the SDK is never loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startTracingSdk } = require('./tracing-sdk') as typeof import('./tracing-sdk');
  return startTracingSdk(configuredRoles(env), env);
}

/** For the resource's `ambient.roles`; a bad config is main.ts's to report, not this. */
function configuredRoles(env: NodeJS.ProcessEnv): Role[] {
  try {
    return loadConfig(env).roles;
  } catch {
    return [];
  }
}
