// @ts-check
'use strict';
/**
 * `node -r ./test/support/ts-register.js file.ts`: runs Ambient's TypeScript sources in the child
 * processes the tests start (the server, its CLI, the self-hosted worker), compiled by swc with
 * the options jest's own transform reads (`.swcrc`) and tsconfig's `paths`. It stands in for
 * `@swc-node/register`, which loads the whole TypeScript compiler to read tsconfig: about a
 * second of CPU in every process a test starts, two hundred of them per run. Each file's output is
 * kept in node_modules/.cache by a digest of its source and the options, so the next process
 * reads it instead of compiling it again.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- CommonJS, preloaded by node as is */
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { transformSync, version } = require('@swc/core');
const { addHook } = require('pirates');

const ROOT = path.resolve(__dirname, '../..');
const swcrc = JSON.parse(fs.readFileSync(path.join(ROOT, '.swcrc'), 'utf8'));
const { paths } = JSON.parse(
  fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'),
).compilerOptions;
const OPTIONS = {
  ...swcrc,
  $schema: undefined,
  sourceMaps: 'inline',
  // swc takes a base URL given here (not in a file) only as an absolute path.
  jsc: { ...swcrc.jsc, baseUrl: ROOT, paths },
  swcrc: false,
  configFile: false,
};
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'ambient-ts-register');
const optionsDigest = createHash('sha256')
  .update(JSON.stringify([version, OPTIONS]))
  .digest();

/** @param {string} source @param {string} filename @returns {string} */
function compile(source, filename) {
  const key = createHash('sha256')
    .update(optionsDigest)
    .update(`${filename}\0`)
    .update(source)
    .digest('hex');
  const cached = path.join(CACHE, `${key}.js`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch {
    // Not compiled yet (or the cache is not readable here): compile it.
  }
  const { code } = transformSync(source, { ...OPTIONS, filename });
  try {
    // Written aside, then renamed: a process reading it at once never sees half a file.
    fs.mkdirSync(CACHE, { recursive: true });
    const partial = `${cached}.${process.pid}.partial`;
    fs.writeFileSync(partial, code);
    fs.renameSync(partial, cached);
  } catch {
    // A read-only tree (inside a sandbox): compiled again next time.
  }
  return code;
}

process.setSourceMapsEnabled(true);
addHook(compile, { exts: ['.ts'], ignoreNodeModules: true });
