import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { TS_REGISTER } from './ts-register-path';

const ROOT = resolve(__dirname, '../..');
/** A CLI command that has not ended after this long is stuck (well before jest's 120 s timeout). */
const CLI_ENDS_WITHIN_MS = 90_000;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs Ambient's CLI from the TypeScript sources, as `npm run cli` does when dist/ is not current
 * (tests never depend on a build), in a child process with `env` (and `stdin`, if any).
 */
export function runCli(args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, ['-r', TS_REGISTER, 'src/cli/main.ts', ...args], {
      cwd: ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const stuck = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `ambient ${args.join(' ')} did not end within ${CLI_ENDS_WITHIN_MS} ms; ` +
            `stdout: ${JSON.stringify(stdout)}, stderr: ${JSON.stringify(stderr)}`,
        ),
      );
    }, CLI_ENDS_WITHIN_MS);
    child.once('error', (err) => {
      clearTimeout(stuck);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(stuck);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(stdin ?? '');
  });
}

/**
 * Starts the CLI as `runCli` does and hands over its process, for tests that read its stdout
 * themselves; `exited` resolves with its exit code and stderr.
 */
export function startCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): { child: ChildProcessWithoutNullStreams; exited: Promise<Omit<CliResult, 'stdout'>> } {
  const child = spawn(process.execPath, ['-r', TS_REGISTER, 'src/cli/main.ts', ...args], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end();
  const exited = new Promise<Omit<CliResult, 'stdout'>>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
  return { child, exited };
}
