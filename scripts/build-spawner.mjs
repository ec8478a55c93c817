// Compiles the sandboxes' process spawner (native/spawner.c) to native/build/ambient-spawner with
// the host's C compiler. Run by `npm ci` (postinstall) and `npm run build`. Without a compiler it
// says so and exits 0: Ambient then starts processes from a small Node helper instead (slower
// per process: docs/PERFORMANCE.md), and `AMBIENT_PROCESS_SPAWNER=node` asks for that one anyway.
// Plain JavaScript: it runs before anything is compiled.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'native', 'spawner.c');
const binary = join(root, 'native', 'build', 'ambient-spawner');

function upToDate() {
  return existsSync(binary) && statSync(binary).mtimeMs >= statSync(source).mtimeMs;
}

function compile() {
  const compilers = [process.env.CC, 'cc', 'gcc', 'clang'].filter(Boolean);
  mkdirSync(dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}`;
  for (const cc of compilers) {
    try {
      execFileSync(cc, ['-O2', '-Wall', '-Wextra', '-o', partial, source], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      // Renamed into place, so that a running Ambient never sees half a binary.
      renameSync(partial, binary);
      return cc;
    } catch (err) {
      if (err.code === 'ENOENT') continue;
      // An install must not fail on it: the Node helper does the same work.
      console.warn(`ambient-spawner: ${cc} failed:\n${err.stderr?.toString() ?? err.message}`);
      return null;
    }
  }
  return null;
}

if (process.platform !== 'linux') {
  console.log('ambient-spawner: not built (Linux only); processes start from the Node helper');
} else if (!upToDate()) {
  const cc = compile();
  console.log(
    cc
      ? `ambient-spawner: built with ${cc}`
      : 'ambient-spawner: not built (no working C compiler); processes start from the Node helper',
  );
}
