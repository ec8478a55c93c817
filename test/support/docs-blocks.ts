import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The fenced code blocks of the user docs (README.md and docs/*.md), and how docs-commands.e2e-spec
 * runs the shell ones that call the API. A block may be preceded by one directive comment:
 *   <!-- docs-test: skip (why it cannot run in a test) -->
 *   <!-- docs-test: expects 400 (why the block shows that answer) -->
 */
export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
  /** The text between the previous block and this one. */
  before: string;
  directive?: Directive;
}

export type Directive =
  { kind: 'skip'; reason: string } | { kind: 'expects'; statuses: number[]; reason: string };

/** A directive comment that is not right before a fence, or that cannot be read. */
export interface DirectiveProblem {
  file: string;
  line: number;
  problem: string;
}

const FENCE = /^(\s*)(`{3,})\s*([\w-]*)\s*$/;
const DIRECTIVE = /^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$/;

/** README.md and every docs/*.md, relative to `root`. */
export function userDocs(root: string): string[] {
  const guides = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...guides];
}

export function readBlocks(
  root: string,
  file: string,
): { blocks: DocBlock[]; problems: DirectiveProblem[] } {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  const problems: DirectiveProblem[] = [];
  let pending: { line: number; directive: Directive } | undefined;
  let text: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const directive = DIRECTIVE.exec(lines[i]);
    if (directive) {
      if (pending) problems.push({ file, line: pending.line, problem: 'not followed by a block' });
      const parsed = parseDirective(directive[1]);
      if (typeof parsed === 'string') problems.push({ file, line: i + 1, problem: parsed });
      else pending = { line: i + 1, directive: parsed };
      continue;
    }
    const fence = FENCE.exec(lines[i]);
    if (!fence) {
      text.push(lines[i]);
      if (pending && lines[i].trim() !== '') {
        problems.push({ file, line: pending.line, problem: 'not followed by a block' });
        pending = undefined;
      }
      continue;
    }
    const [, indent, ticks, lang] = fence;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i].trim() !== ticks; i++) {
      body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i]);
    }
    const code = body.join('\n');
    blocks.push({
      file,
      line: start + 1,
      lang,
      code,
      before: text.join('\n'),
      directive: pending?.directive,
    });
    pending = undefined;
    text = [];
  }
  if (pending) problems.push({ file, line: pending.line, problem: 'not followed by a block' });
  return { blocks, problems };
}

function parseDirective(text: string): Directive | string {
  const match = /^(skip|expects((?:\s+\d{3})+))\s+\((.+)\)$/.exec(text);
  if (!match) return `unreadable directive "${text}": skip (reason) or expects <status>… (reason)`;
  if (match[1] === 'skip') return { kind: 'skip', reason: match[3] };
  const statuses = match[2].trim().split(/\s+/).map(Number);
  return { kind: 'expects', statuses, reason: match[3] };
}

/** A shell block that calls the API with curl against $AMBIENT_API_URL. */
export function callsApi(block: DocBlock): boolean {
  return (
    ['bash', 'sh', 'shell'].includes(block.lang) &&
    /\bcurl\b/.test(block.code) &&
    /\$\{?AMBIENT_API_URL\b/.test(block.code)
  );
}

/**
 * The variables a block reads ($NAME, ${NAME…}), and the ones the docs' blocks of a file set
 * (NAME=…, export NAME=…, read NAME, for NAME in).
 */
export function variablesRead(code: string): string[] {
  const withoutQuoted = code
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .map((line) => line.replace(/'[^']*'/g, "''").replace(/\s#\s.*$/, ''))
    .join('\n');
  const names = [...withoutQuoted.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
  return [...new Set(names)];
}

export function variablesSet(code: string): string[] {
  const names = [
    ...code.matchAll(/(?:^|[\s;(])(?:export\s+|local\s+)?([A-Za-z_][A-Za-z0-9_]*)=/gm),
    ...code.matchAll(/\b(?:read(?:\s+-\w+)*|for)\s+([A-Za-z_][A-Za-z0-9_]*)/g),
  ].map((m) => m[1]);
  return [...new Set(names)];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The headings of a markdown text (outside code blocks), without their leading #s. */
export function headings(markdown: string): string[] {
  const found: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const opening = FENCE.exec(line);
    if (opening && (!fence || line.trim() === fence)) {
      fence = fence ? undefined : opening[2];
      continue;
    }
    const heading = !fence && /^#{1,6}\s+(.+?)\s*$/.exec(line);
    if (heading) found.push(heading[1]);
  }
  return found;
}

/** The anchors GitHub gives the headings of `markdown` (a repeated one gets -1, -2 …). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const heading of headings(markdown)) {
    const base = headingAnchor(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count ? `${base}-${count}` : base);
  }
  return result;
}

/** Relative links of a markdown text ([text](target)), outside code blocks. */
export function relativeLinks(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, index) => {
    const opening = FENCE.exec(text);
    if (opening && (!fence || text.trim() === fence)) {
      fence = fence ? undefined : opening[2];
      return;
    }
    if (fence) return;
    const outsideCode = text.replace(/`[^`]*`/g, '');
    for (const match of outsideCode.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z]+:/i.test(match[1])) links.push({ target: match[1], line: index + 1 });
    }
  });
  return links;
}

/**
 * Bash before every block: strict mode, a curl that reports each answer's status on stderr, and
 * the variables and functions the earlier blocks of the same file left (as a reader's shell keeps
 * them), saved again when the block succeeds.
 */
const PRELUDE = String.raw`
set -euo pipefail
__docs_before=" $(compgen -v | tr '\n' ' ') "
curl() { command curl --write-out '%{stderr}docs-test: HTTP %{http_code} %{method} %{url_effective}\n' "$@"; }
if [ -f "$DOCS_TEST_STATE" ]; then source "$DOCS_TEST_STATE"; fi
__docs_save() {
  local __docs_status=$? __docs_name
  [ "$__docs_status" = 0 ] || return 0
  {
    for __docs_name in $(compgen -v); do
      case "$__docs_name" in __docs* | BASH* | _ | PIPESTATUS | FUNCNAME) continue ;; esac
      case "$__docs_before" in *" $__docs_name "*) continue ;; esac
      declare -p "$__docs_name"
    done
    for __docs_name in $(compgen -A function); do
      case "$__docs_name" in __docs* | curl) continue ;; esac
      declare -f "$__docs_name"
    done
  } >"$DOCS_TEST_STATE.next"
  mv "$DOCS_TEST_STATE.next" "$DOCS_TEST_STATE"
}
trap __docs_save EXIT
`;

export interface BlockRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The HTTP status of every curl answer, in order. */
  statuses: number[];
  timedOut: boolean;
}

/** Runs a block with bash in `cwd`, with `env` and the state file of its document. */
export function runBlock(
  block: DocBlock,
  options: { cwd: string; env: NodeJS.ProcessEnv; stateFile: string; timeoutMs: number },
): Promise<BlockRun> {
  const script = join(options.cwd, `.docs-test-${block.line}.sh`);
  writeFileSync(script, `${PRELUDE}\n${block.code}\n`);
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], {
      cwd: options.cwd,
      env: { ...options.env, DOCS_TEST_STATE: options.stateFile },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-child.pid!, 'SIGKILL');
    }, options.timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      const statuses = [...stderr.matchAll(/^docs-test: HTTP (\d{3}) /gm)].map((m) => Number(m[1]));
      resolve({ code, stdout, stderr, statuses, timedOut });
    });
  });
}
