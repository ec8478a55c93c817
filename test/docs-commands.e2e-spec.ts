import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import {
  anchors,
  callsApi,
  DocBlock,
  headings,
  readBlocks,
  relativeLinks,
  runBlock,
  userDocs,
  variablesRead,
  variablesSet,
} from './support/docs-blocks';
import { bareRepo } from './support/git-repos';
import { REPO_ROOT } from './support/test-app';
import { useTestApp } from './support/use-test-app';

/**
 * The commands of README.md and docs/*.md work when pasted: every shell block that calls the API
 * (curl against $AMBIENT_API_URL) runs with bash against a real server, with the two variables the
 * README defines set to it, and must exit 0 with every answer 2xx. A block that cannot run here
 * says why in a `<!-- docs-test: skip (…) -->` comment before it.
 */
const DOCS = userDocs(REPO_ROOT).map((file) => ({ file, ...readBlocks(REPO_ROOT, file) }));
const API_BLOCKS = DOCS.flatMap((doc) => doc.blocks.filter(callsApi));

/**
 * What a reader brings to the API-calling blocks: the pair the README defines at its top, and,
 * in blocks that run inside a run's sandbox, the run-scoped key Ambient gives its commands.
 */
const OUTSIDE_VARIABLES = new Set(['AMBIENT_API_URL', 'AMBIENT_API_KEY', 'AMBIENT_RUN_KEY']);

/** Files whose comments and strings point readers at a heading of the docs. */
const POINTING_FILES =
  /^(src\/.*\.tsx?|console\/src\/.*\.tsx?|config\/.*\.yaml|deploy\/.*\.(ya?ml|json)|examples\/.*\.js|docs\/.*\.md|README\.md|Dockerfile|docker-compose\.yml|\.ci\/run|bin\/.*|scripts\/.*)$/;
const POINTER = /\b(README|docs\/[\w.-]+\.md),? "([^"]+)"/g;

describe('docs: what the shell blocks and links promise', () => {
  it('puts each docs-test directive right before a block that calls the API', () => {
    const problems = DOCS.flatMap((doc) =>
      doc.problems.map((p) => `${p.file}:${p.line} ${p.problem}`),
    );
    const stray = DOCS.flatMap((doc) => doc.blocks)
      .filter((block) => block.directive && !callsApi(block))
      .map((block) => `${block.file}:${block.line} has a directive but calls no API`);
    expect([...problems, ...stray]).toEqual([]);
    expect(API_BLOCKS.length).toBeGreaterThan(20);
  });

  it('uses one pair of variables: AMBIENT_API_URL and AMBIENT_API_KEY, and only what its document sets', () => {
    const undefinedVariables = DOCS.flatMap((doc) => {
      const set = new Set(doc.blocks.flatMap((block) => variablesSet(block.code)));
      return doc.blocks.filter(callsApi).flatMap((block) =>
        variablesRead(block.code)
          .filter((name) => !OUTSIDE_VARIABLES.has(name) && !set.has(name))
          // A skipped block may use a value its text introduces (`$TEAM` is that team's uid).
          .filter(
            (name) => !(block.directive?.kind === 'skip' && block.before.includes(`\`$${name}\``)),
          )
          .map((name) => `${block.file}:${block.line} reads $${name}, which nothing sets`),
      );
    });
    expect(undefinedVariables).toEqual([]);
  });

  it('links only to files and headings that exist', () => {
    const broken = DOCS.flatMap(({ file }) => {
      const text = readFileSync(join(REPO_ROOT, file), 'utf8');
      return relativeLinks(text).flatMap(({ target, line }) => {
        const [path, anchor] = target.split('#');
        const resolved = path ? normalize(join(dirname(file), path)) : file;
        if (!existsSync(join(REPO_ROOT, resolved)))
          return [`${file}:${line} ${target}: no such file`];
        if (!anchor || !resolved.endsWith('.md')) return [];
        const targetText = readFileSync(join(REPO_ROOT, resolved), 'utf8');
        return anchors(targetText).has(anchor)
          ? []
          : [`${file}:${line} ${target}: no such heading`];
      });
    });
    expect(broken).toEqual([]);
  });

  it('points code, configuration and help texts at headings that exist', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((file) => POINTING_FILES.test(file) && existsSync(join(REPO_ROOT, file)));
    const headingsOf = new Map<string, string[]>();
    const broken = files.flatMap((file) =>
      [...readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(POINTER)].flatMap(
        ([, doc, heading]) => {
          const target = doc === 'README' ? 'README.md' : doc;
          if (!existsSync(join(REPO_ROOT, target))) return [`${file}: ${doc} does not exist`];
          if (!headingsOf.has(target)) {
            headingsOf.set(target, headings(readFileSync(join(REPO_ROOT, target), 'utf8')));
          }
          const found = headingsOf.get(target)!.some((h) => h.startsWith(heading));
          return found ? [] : [`${file}: ${doc} "${heading}" is no heading of ${target}`];
        },
      ),
    );
    expect(broken).toEqual([]);
  });
});

describe('docs: the API-calling shell blocks, run against a server', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'ambient-docs-'));
  const gitRoot = join(workDir, 'git');
  /** Where the blocks run: a directory with the checkout's package.json, as `npm run cli` needs. */
  const checkout = join(workDir, 'checkout');

  beforeAll(() => {
    // The repository the examples name, with the skill the skills example runs.
    bareRepo(gitRoot, 'acme', 'web', {
      'README.md': 'The web app.\n',
      // `cd web && npm ci` succeeds offline: no dependencies.
      'package.json': JSON.stringify({ name: 'web', version: '1.0.0', private: true }),
      'package-lock.json': JSON.stringify({
        name: 'web',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: { '': { name: 'web', version: '1.0.0' } },
      }),
      '.agents/skills/review-pr/SKILL.md':
        '---\nname: review-pr\ndescription: Reviews a pull request.\n---\nReview pull request $ARGUMENTS.\n',
    });
    mkdirSync(checkout);
    symlinkSync(join(REPO_ROOT, 'package.json'), join(checkout, 'package.json'));
    symlinkSync(join(REPO_ROOT, 'bin'), join(checkout, 'bin'));
  });
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  const { model, app } = useTestApp('docs-commands', ['api', 'worker', 'ingress'], () => ({
    'models.file': catalogueOnFakeServer(workDir, model.url),
    'environments.gitUrlBase': gitRoot,
    extensions: join(REPO_ROOT, 'examples/extensions/hello-ambient'),
    // Some runs the docs start wait on setup commands or MCP servers that need a network this
    // machine lacks; the walkthrough that follows its run to the end must not queue behind them.
    'runs.workerConcurrency': 8,
  }));

  // The API guide's first example follows a run, steers it and cancels it: its model answers
  // late, so that the run is still going when the cancel comes (it took 0.6 s on its own).
  beforeAll(() =>
    model.scriptPrompt(/^Count the lines of every \*\.ts file/, [
      { delayMs: 15_000, then: { text: 'Counted.' } },
    ]),
  );

  const documents = [...new Set(API_BLOCKS.map((block) => block.file))];
  describe.each(documents)('%s', (file) => {
    const stateFile = join(workDir, `${file.replace(/\W/g, '_')}.state`);
    for (const block of API_BLOCKS.filter((b) => b.file === file)) {
      const name = `${file}:${block.line}`;
      if (block.directive?.kind === 'skip') {
        it.skip(`${name} (${block.directive.reason})`, () => undefined);
        continue;
      }
      it(
        name,
        async () => {
          const result = await runBlock(block, {
            cwd: checkout,
            env: {
              PATH: process.env.PATH,
              HOME: process.env.HOME,
              AMBIENT_API_URL: app.baseUrl,
              AMBIENT_API_KEY: app.apiKey,
            },
            stateFile,
            timeoutMs: 180_000,
          });
          const problems = blockProblems(block, result);
          if (problems.length) {
            throw new Error(
              `${name}: ${problems.join('; ')}\n--- stdout\n${result.stdout.slice(-3000)}\n--- stderr\n${result.stderr.slice(-3000)}`,
            );
          }
        },
        240_000,
      );
    }
  });
});

/** What is wrong with a block's run: its exit, and every answer that is not 2xx (or expected). */
function blockProblems(
  block: DocBlock,
  result: { code: number | null; statuses: number[]; timedOut: boolean },
): string[] {
  const expected = block.directive?.kind === 'expects' ? block.directive.statuses : [];
  const problems: string[] = [];
  if (result.timedOut) problems.push('did not finish within 180 s');
  else if (result.code !== 0) problems.push(`exited ${result.code}`);
  if (result.statuses.length === 0) problems.push('made no API call');
  const unexpected = result.statuses.filter((s) => (s < 200 || s > 299) && !expected.includes(s));
  if (unexpected.length) problems.push(`answers ${unexpected.join(', ')} (not 2xx)`);
  const missing = expected.filter((s) => !result.statuses.includes(s));
  if (missing.length) problems.push(`expected an answer ${missing.join(', ')} it did not get`);
  return problems;
}

/**
 * config/models.yaml with every provider on the fake model server and no key needed, so the
 * model ids the docs name are enabled and their runs get an answer.
 */
function catalogueOnFakeServer(dir: string, modelUrl: string): string {
  const catalogue = readFileSync(join(REPO_ROOT, 'config/models.yaml'), 'utf8')
    .replace(/^(\s+base_url:) https:\/\/\S+$/gm, `$1 ${modelUrl}`)
    .replace(/^\s+api_key_env: .*\n/gm, '');
  const file = join(dir, 'models.yaml');
  writeFileSync(file, catalogue);
  return file;
}
