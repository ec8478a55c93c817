// Whether dist/ was built from the sources as they are now. `npm run build` ends by writing a
// fingerprint of its inputs (paths, sizes, modification times) to dist/.build-stamp;
// `npm start` and bin/ambient.mjs compare it with the sources', so they rebuild or fall back
// only when something changed. Plain JavaScript: it runs before anything is compiled.
//   node scripts/build-stamp.mjs write   after a build
//   node scripts/build-stamp.mjs check   exit 0 when dist/ is current, 1 when it must be rebuilt
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What the build reads: compiled directories and the files that configure the compilers. */
export const BUILD_INPUTS = [
  'src',
  'migrations',
  'console',
  '.swcrc',
  'tsconfig.json',
  'package.json',
  'package-lock.json',
];
export const STAMP_FILE = 'dist/.build-stamp';

function* files(path) {
  if (!existsSync(path)) return;
  if (!statSync(path).isDirectory()) {
    yield path;
    return;
  }
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'node_modules') continue;
    yield* files(join(path, entry.name));
  }
}

/** A hash of every input file's path, size and modification time under `root`. */
export function sourceFingerprint(root) {
  const hash = createHash('sha256');
  const lines = [];
  for (const input of BUILD_INPUTS) {
    for (const file of files(join(root, input))) {
      const { size, mtimeMs } = statSync(file);
      lines.push(`${relative(root, file)}\0${size}\0${mtimeMs}`);
    }
  }
  for (const line of lines.sort()) hash.update(`${line}\n`);
  return hash.digest('hex');
}

/** True when `root`/dist holds a complete build of the sources as they are now. */
export function buildIsCurrent(root) {
  const stamp = join(root, STAMP_FILE);
  return existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === sourceFingerprint(root);
}

export function writeStamp(root) {
  writeFileSync(join(root, STAMP_FILE), `${sourceFingerprint(root)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const command = process.argv[2];
  if (command === 'write') {
    writeStamp(root);
  } else if (command === 'check') {
    const current = buildIsCurrent(root);
    process.stderr.write(
      current
        ? 'dist/ is current; not rebuilding\n'
        : 'sources changed since the last build; building\n',
    );
    process.exitCode = current ? 0 : 1;
  } else {
    process.stderr.write('usage: node scripts/build-stamp.mjs write|check\n');
    process.exitCode = 2;
  }
}
