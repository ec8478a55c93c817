import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { REPO_ROOT } from './test-app';

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
