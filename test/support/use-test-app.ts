import { Role } from '../../src/config/app-config';
import { FakeModelServer, startFakeModelServer } from '../fixtures/fake-model-server';
import { apiClient } from './api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from './test-app';

/** Model URL of files that run no model: nothing listens on port 9. */
const NO_MODEL_URL = 'http://127.0.0.1:9/v1';

export interface UseTestAppOptions {
  /** Start the fake model server (default true); without it the catalogue points at a dead port. */
  model?: boolean;
  /** The run lease (default 10 s; TAKEOVER_LEASE_MS for files that await a takeover). */
  leaseMs?: number;
}

export interface UsedTestApp {
  model: FakeModelServer;
  env: TestEnvironment;
  app: TestApp;
  api: ReturnType<typeof apiClient>;
}

/**
 * The start-up every e2e file shares: a fake model server, an isolated database and Redis prefix,
 * one in-process Ambient with `roles` and its API client, torn down in the reverse order (app,
 * environment, model). Registers beforeAll/afterAll in the calling describe block and returns
 * handles that stand for the started objects once beforeAll has run, so a file writes
 * `const { api, model } = useTestApp(...)` and keeps calling `api.get(...)`.
 *
 * `overrides` may be a function, for settings that another beforeAll computes first (declare that
 * beforeAll before calling useTestApp: jest runs them in order).
 */
export function useTestApp(
  label: string,
  roles: Role[] = ['api', 'worker'],
  overrides: Record<string, unknown> | (() => Record<string, unknown>) = {},
  options: UseTestAppOptions = {},
): UsedTestApp {
  const started: Partial<UsedTestApp> = {};

  beforeAll(async () => {
    if (options.model ?? true) started.model = await startFakeModelServer();
    started.env = createTestEnvironment(label, started.model?.url ?? NO_MODEL_URL, {
      leaseMs: options.leaseMs,
    });
    const settings = typeof overrides === 'function' ? overrides() : overrides;
    started.app = await startTestApp(started.env, roles, settings);
    started.api = apiClient(started.app.baseUrl, started.app.apiKey);
  });

  afterAll(async () => {
    await started.app?.close();
    await started.env?.destroy();
    await started.model?.close();
  });

  return {
    model: handle(label, 'model', () => started.model),
    env: handle(label, 'env', () => started.env),
    app: handle(label, 'app', () => started.app),
    api: handle(label, 'api', () => started.api),
  };
}

/** An object whose properties are read from `current()` at use time, not when the file loads. */
function handle<T extends object>(label: string, name: string, current: () => T | undefined): T {
  const target = (): T => {
    const value = current();
    if (!value)
      throw new Error(`useTestApp(${label}): ${name} is used before beforeAll started it`);
    return value;
  };
  return new Proxy({} as T, {
    get: (_, property) => {
      const value = target();
      const member: unknown = Reflect.get(value, property);
      return typeof member === 'function' ? member.bind(value) : member;
    },
    set: (_, property, member) => Reflect.set(target(), property, member),
    has: (_, property) => Reflect.has(target(), property),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, property) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target(), property);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}
