import { execFile } from 'node:child_process';

export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The last `count` non-empty lines of a command's output. */
export function lastLines(output: string, count: number): string {
  return output
    .split('\n')
    .filter((line) => line.trim())
    .slice(-count)
    .join('\n');
}

/** The token goes in an HTTP header through git's environment config, never on a command line. */
export function gitEnv(token: string | null): Record<string, string> {
  const env: Record<string, string> = { GIT_TERMINAL_PROMPT: '0' };
  if (!token) return env;
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  return {
    ...env,
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}

export interface GitCloneResult {
  /** Null when git was killed (timeout, abort) or could not be started. */
  exitCode: number | null;
  output: string;
  timedOut: boolean;
  aborted: boolean;
}

/**
 * Ambient's own `git clone` of a repository URL it built itself (never agent input), run on this
 * host without a shell: the token stays out of every sandbox and no repository code runs.
 *
 * Why outside the Sandbox boundary: nothing here is agent-controlled. The URL is the operator's
 * AMBIENT_GIT_URL_BASE plus an owner/repo checked by `isSafeRepoPart`, the arguments are fixed,
 * and `git clone` runs no hooks of the cloned repository. A sandbox with `network: none` could not
 * clone at all, and cloning inside would put the team's git token where the agent can read it.
 * Everything that then runs in the cloned tree (setup commands, the agent) goes through the sandbox.
 */
export function gitClone(options: {
  url: string;
  dest: string;
  cwd: string;
  token: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Extra `-c` settings and clone options (e.g. ['--depth', '1']). */
  configs?: string[];
  cloneArgs?: string[];
}): Promise<GitCloneResult> {
  const args = [
    ...(options.configs ?? []).flatMap((c) => ['-c', c]),
    'clone',
    '--quiet',
    ...(options.cloneArgs ?? []),
    '--',
    options.url,
    options.dest,
  ];
  return runGit(args, options);
}

/**
 * The commit a repository URL's HEAD points at (`git ls-remote <url> HEAD`), through the same
 * credential path as `gitClone` (the token in git's environment, never on a command line); null
 * when it cannot be told (git failed, no HEAD).
 */
export async function gitHeadCommit(options: {
  url: string;
  token: string | null;
  timeoutMs: number;
  signal?: AbortSignal;
}): Promise<string | null> {
  const result = await runGit(['ls-remote', '--', options.url, 'HEAD'], {
    ...options,
    cwd: '/',
  });
  if (result.exitCode !== 0) return null;
  const commit = /^([0-9a-f]{40,64})\tHEAD$/m.exec(result.output)?.[1];
  return commit ?? null;
}

/**
 * Runs git on this host without a shell, with nothing of the server's environment but PATH. Not
 * in a sandbox: it is Ambient's own step (clone into a fresh directory, `ls-remote` of a URL built
 * from the server's git base), run before any tenant code and never inside a tree a tenant wrote.
 */
function runGit(
  args: string[],
  options: { cwd: string; token: string | null; timeoutMs: number; signal?: AbortSignal },
): Promise<GitCloneResult> {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...gitEnv(options.token) };
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      args,
      {
        cwd: options.cwd,
        env,
        timeout: options.timeoutMs,
        signal: options.signal,
        killSignal: 'SIGKILL',
      },
      (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { killed?: boolean; code?: unknown }) | null;
        const aborted = options.signal?.aborted ?? false;
        resolve({
          exitCode: e ? (typeof e.code === 'number' ? e.code : null) : 0,
          output: `${stdout}${stderr}${e && typeof e.code !== 'number' && !e.killed && !aborted ? e.message : ''}`,
          timedOut: Boolean(e?.killed) && !aborted,
          aborted,
        });
      },
    );
    child.stdin?.end();
  });
}
