import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { tracingEnabled } from '../config/tracing-enabled';
import { TS_REGISTER } from '../../test/support/ts-register-path';

/** Which @opentelemetry modules a fresh Node process has loaded after `startTracing` with `env`. */
function otelModulesLoaded(env: Record<string, string>): string[] {
  const script = `
    const tracing = require('./src/bootstrap/tracing').startTracing(${JSON.stringify(env)});
    const loaded = Object.keys(require.cache)
      .map((file) => /node_modules\\/(@opentelemetry\\/[^/]+)\\//.exec(file)?.[1])
      .filter(Boolean);
    process.stdout.write(JSON.stringify([...new Set(loaded)]));
    tracing.shutdown();`;
  const out = execFileSync(process.execPath, ['-r', TS_REGISTER, '-e', script], {
    cwd: resolve(__dirname, '../..'),
    env: { PATH: process.env.PATH },
    encoding: 'utf8',
  });
  return JSON.parse(out) as string[];
}

describe('tracing start-up', () => {
  it('is on with an OTLP endpoint, off without one or with OTEL_SDK_DISABLED', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(
      true,
    );
    expect(
      tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBe(false);
  });

  it('loads no OpenTelemetry SDK module when no endpoint is set', () => {
    expect(otelModulesLoaded({})).toEqual([]);
  });

  it('loads the SDK and the instrumentations when an endpoint is set', () => {
    const loaded = otelModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    expect(loaded).toEqual(
      expect.arrayContaining([
        '@opentelemetry/sdk-node',
        '@opentelemetry/instrumentation-http',
        '@opentelemetry/instrumentation-mysql2',
      ]),
    );
  });
});
