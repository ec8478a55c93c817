// Compiles Ambient's three small native programs with the host's C compiler, into native/build:
// - ambient-spawner (native/spawner.c), the sandboxes' process spawner (one inside each bubblewrap
//   execution too);
// - ambient-forwarder (native/forwarder.c), which forwards a sandbox's loopback ports to Ambient's
//   sockets;
// The two that start inside sandboxes are statically linked where the C library allows.
// - ambient-dir-reset (native/dir-reset.c), which gives a pooled container's /workspace directory
//   back the state Ambient made it in (extended attributes and ACLs, mode, owner, times).
// Run by `npm ci` (postinstall) and `npm run build`. Without a compiler it says so and exits 0:
// Ambient then starts processes from a small Node helper and forwards with socat instead (slower
// per process and per sandbox: docs/PERFORMANCE.md); `AMBIENT_PROCESS_SPAWNER=node` asks for the
// Node helper anyway. Plain JavaScript: it runs before anything is compiled.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const PROGRAMS = [
  {
    name: 'ambient-spawner',
    // confine.c: its `--confine`, a bubblewrap execution's sandbox made without bwrap; forwarder.c:
    // the forwarder a sandbox's pid 1 forks without an exec.
    sources: ['spawner.c', 'confine.c', 'forwarder.c'],
    fallback: 'processes start from the Node helper',
    flagSets: [
      ['-static', '-DAMBIENT_FORWARDER_MAIN=forwarder_main'],
      ['-DAMBIENT_FORWARDER_MAIN=forwarder_main'],
    ],
    // Where confine.c does not compile (older kernel headers, say): the spawner alone, bwrap makes
    // bubblewrap's sandboxes (it answers `--confine` with 69) and the forwarder is exec'd.
    without: { sources: ['spawner.c'], flags: '-DAMBIENT_NO_CONFINE' },
  },
  {
    name: 'ambient-forwarder',
    sources: ['forwarder.c'],
    fallback: 'sandboxes forward with socat',
    // Static first: no dynamic loader and no shared library to map at each start.
    flagSets: [['-static'], []],
  },
  {
    name: 'ambient-dir-reset',
    sources: ['dir-reset.c'],
    fallback: "closed sandboxes' docker containers are removed, never reused",
    flagSets: [['-static'], []],
  },
];

function upToDate(sources, binary) {
  return (
    existsSync(binary) &&
    sources.every((source) => statSync(binary).mtimeMs >= statSync(source).mtimeMs)
  );
}

/** The compiler's line that built `binary`, else null (its errors printed). */
function compile(sources, binary, flagSets) {
  const compilers = [process.env.CC, 'cc', 'gcc', 'clang'].filter(Boolean);
  mkdirSync(dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}`;
  for (const cc of compilers) {
    let lastError = null;
    for (const flags of flagSets) {
      try {
        execFileSync(cc, ['-O2', '-Wall', '-Wextra', ...flags, '-o', partial, ...sources], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        // Renamed into place, so that a running Ambient never sees half a binary.
        renameSync(partial, binary);
        return [cc, ...flags].join(' ');
      } catch (err) {
        if (err.code === 'ENOENT') break;
        lastError = err;
      }
    }
    if (lastError) {
      // An install must not fail on it: Ambient does the same work without it.
      console.warn(
        `${binary}: ${cc} failed:\n${lastError.stderr?.toString() ?? lastError.message}`,
      );
      return null;
    }
  }
  return null;
}

for (const program of PROGRAMS) {
  // The headers beside them count too: a changed one makes the program again.
  const sources = program.sources.map((name) => join(root, 'native', name));
  const inputs = [...sources, ...sources.map((s) => s.replace(/\.c$/, '.h')).filter(existsSync)];
  const binary = join(root, 'native', 'build', program.name);
  if (process.platform !== 'linux') {
    console.log(`${program.name}: not built (Linux only); ${program.fallback}`);
  } else if (!upToDate(inputs, binary)) {
    const without = program.without;
    const built =
      compile(sources, binary, program.flagSets) ??
      (without &&
        compile(
          without.sources.map((name) => join(root, 'native', name)),
          binary,
          program.flagSets.map((flags) => [...flags, without.flags]),
        ));
    console.log(
      built
        ? `${program.name}: built with ${built}`
        : `${program.name}: not built (no working C compiler); ${program.fallback}`,
    );
  }
}
