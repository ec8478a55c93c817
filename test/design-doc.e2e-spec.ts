import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { userDocs } from './support/docs-blocks';

/**
 * docs/DESIGN.md describes the code as it is: it names no issue numbers (nor do the other docs),
 * every `src/…` or `test/…` path it names exists, and its list of global Nest modules is the
 * code's. Plain file checks: no server, no database.
 */
const ROOT = resolve(__dirname, '..');
const DESIGN = 'docs/DESIGN.md';

/** "issue 25", "issues 3 and 4", "#12", "(#14)"; not a link anchor such as "(#1-purpose)". */
const ISSUE_REFERENCE = /\bissues?\s+#?\d+|(?:^|[\s(])#\d+(?![\w-])/gim;

/** The globals a library registers (`BullModule.forRoot`), which no file of src/ declares. */
const LIBRARY_GLOBALS = new Set(['BullModule']);

function read(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}

/** `file:line: text` of every issue reference in `file`. */
function issueReferences(file: string): string[] {
  return read(file)
    .split('\n')
    .flatMap((text, i) =>
      [...text.matchAll(ISSUE_REFERENCE)].map((m) => `${file}:${i + 1}: ${m[0].trim()}`),
    );
}

/** Repository paths named in backticks: `src/…` and `test/…`, without placeholders or globs. */
function namedPaths(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]);
  const paths = spans.flatMap((span) =>
    [...span.matchAll(/(?:^|[\s(])((?:src|test)\/[^\s,;:()`]*)/g)].map((m) =>
      m[1].replace(/[.]+$/, ''),
    ),
  );
  return [...new Set(paths)].filter((path) => !/[<>*{}…]/.test(path));
}

/** Classes of src/ that are global Nest modules: `@Global()`, or a dynamic module `global: true`. */
function globalModulesInCode(): string[] {
  const files = execFileSync('git', ['ls-files', 'src'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'));
  return files.flatMap((file) => {
    const text = read(file);
    const decorated = [...text.matchAll(/@Global\(\)[\s\S]*?\bclass\s+(\w+)/g)].map((m) => m[1]);
    const dynamic = [...text.matchAll(/module:\s*(\w+),\s*global:\s*true/g)].map((m) => m[1]);
    return [...decorated, ...dynamic];
  });
}

/** The module names in backticks of DESIGN.md's "**Global modules.**" item. */
function globalModulesInDesign(text: string): string[] {
  const start = text.indexOf('**Global modules.**');
  if (start < 0) return [];
  const ends = ['\n- ', '\n\n'].map((mark) => text.indexOf(mark, start)).filter((i) => i > 0);
  const item = text.slice(start, ends.length ? Math.min(...ends) : undefined);
  return [...item.matchAll(/`(\w+Module)\b[^`]*`/g)].map((m) => m[1]);
}

describe('docs/DESIGN.md: the code as it is', () => {
  it('names no issue numbers, nor does any other doc', () => {
    expect(userDocs(ROOT).flatMap(issueReferences)).toEqual([]);
  });

  it('names only src/ and test/ paths that exist', () => {
    const paths = namedPaths(read(DESIGN));
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it('lists exactly the global modules the code declares', () => {
    const inCode = new Set(globalModulesInCode());
    const inDesign = new Set(globalModulesInDesign(read(DESIGN)));
    expect(inCode.size).toBeGreaterThan(5);
    expect([...inCode].filter((name) => !inDesign.has(name))).toEqual([]);
    expect([...inDesign].filter((name) => !inCode.has(name) && !LIBRARY_GLOBALS.has(name))).toEqual(
      [],
    );
  });
});
