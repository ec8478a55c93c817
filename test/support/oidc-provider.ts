import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { REPO_ROOT } from './test-app';
import { freePort } from './console-browser';

/** A person the test provider knows, by login. */
export interface TestAccount {
  email: string;
  name: string;
  groups: string[];
}

export interface TestOidcProvider {
  issuer: string;
  /** Adds or replaces an account (its next sign-in carries the new claims). */
  setAccount(login: string, account: TestAccount): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts test/fixtures/oidc-provider-server.mjs (a real oidc-provider on loopback, in a process of
 * its own: the package is ESM-only) and answers once it listens.
 */
export async function startOidcProvider(config: {
  clientId: string;
  clientSecret?: string;
  redirectUri: string;
  accounts: Record<string, TestAccount>;
}): Promise<TestOidcProvider> {
  const child = spawn(
    process.execPath,
    [join(REPO_ROOT, 'test/fixtures/oidc-provider-server.mjs')],
    {
      env: { ...process.env, OIDC_TEST_CONFIG: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const issuer = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    lines.once('line', (line) => resolve((JSON.parse(line) as { issuer: string }).issuer));
    child.once('exit', (code) => reject(new Error(`OpenID provider exited (${code}): ${stderr}`)));
  });
  return {
    issuer,
    async setAccount(login, account) {
      const res = await fetch(`${issuer}/test/accounts/${encodeURIComponent(login)}`, {
        method: 'PUT',
        body: JSON.stringify(account),
      });
      if (res.status !== 204) throw new Error(`setAccount answered ${res.status}`);
    },
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

const CONSOLE_CLIENT = { id: 'ambient-console', secret: 'test-client-secret-0123456789' };

/** A test provider for one describe block, and the settings of an app whose sign-in trusts it. */
export interface OidcSignIn {
  readonly provider: TestOidcProvider;
  /** The app's settings: its port (the provider's redirect), the provider, `roleMapping`. */
  appSettings(roleMapping: string, extra?: Record<string, unknown>): Record<string, unknown>;
}

/**
 * Starts a provider with `accounts` before the block's app (declare it before `useTestApp`, whose
 * settings then come from `appSettings`) and closes it after.
 */
export function useOidcSignIn(accounts: Record<string, TestAccount>): OidcSignIn {
  let provider: TestOidcProvider | undefined;
  let port = 0;
  beforeAll(async () => {
    port = await freePort();
    provider = await startOidcProvider({
      clientId: CONSOLE_CLIENT.id,
      clientSecret: CONSOLE_CLIENT.secret,
      redirectUri: `http://127.0.0.1:${port}/api/v1/auth/oidc/callback`,
      accounts,
    });
  }, 60_000);
  afterAll(() => provider?.close());
  const started = () => {
    if (!provider) throw new Error('useOidcSignIn: the provider is used before beforeAll');
    return provider;
  };
  return {
    get provider() {
      return started();
    },
    appSettings: (roleMapping, extra = {}) => ({
      'server.port': port,
      'signIn.oidcIssuer': started().issuer,
      'signIn.oidcClientId': CONSOLE_CLIENT.id,
      'signIn.oidcClientSecret': CONSOLE_CLIENT.secret,
      'signIn.oidcScopes': 'openid email profile groups',
      'signIn.oidcRoleMapping': roleMapping,
      ...extra,
    }),
  };
}
