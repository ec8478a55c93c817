import { startTracing } from './tracing';

/**
 * Imported by main.ts before anything else of Ambient, so OpenTelemetry (when configured) is
 * running before express, mysql2 and ioredis are loaded.
 */
export const tracing = startTracing();
