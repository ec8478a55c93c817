#!/usr/bin/env node
// The Ambient CLI (`npm run cli -- <command>`, or `ambient <command>` after `npm link`): the
// compiled dist/src/cli/main.js when dist/ is current (well under a second to first output),
// else the TypeScript sources through swc (seconds; `npm run build` makes it fast again).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from '../scripts/build-stamp.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

if (buildIsCurrent(root)) {
  require(join(root, 'dist/src/cli/main.js'));
} else {
  // Only on a terminal: scripts reading stderr see the command's own lines alone.
  if (process.stderr.isTTY) {
    process.stderr.write(
      'ambient: dist/ is older than the sources, running them through swc (slow); `npm run build` makes the CLI fast\n',
    );
  }
  require('@swc-node/register');
  require(join(root, 'src/cli/main.ts'));
}
