/**
 * Issue 19, class 2: a process inside the run's sandbox (here a stdio MCP server, which lives as
 * long as the execution) flips `t.txt` between a plain file and a symlink to a host file while
 * the model reads and writes `t.txt` with the built-in tools. The tools must never reach the
 * host file: no read returns its marker, and its content and mtime stay as they were.
 */
import { execFile } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  FakeModelServer,
  FakeStep,
  FakeToolCall,
  startFakeModelServer,
} from '../fixtures/fake-model-server';
import { apiClient } from '../support/api-client';
import { createTestEnvironment, startTestApp, TestApp, TestEnvironment } from '../support/test-app';
import { waitFor } from '../support/wait';

const IMAGE = 'ambient-agent:bookworm';
const BUILD_IMAGE = resolve(__dirname, '..', '..', 'sandbox', 'agent-image', 'build-image.sh');
const MARKER = `HOST-FILE-MARKER-${process.pid}-${Date.now()}`;
/**
 * Reads spread over many model turns, so that they fall at many different moments of the flip:
 * on a loaded host the flipper (at the sandboxes' low CPU weight) may hold one state for
 * hundreds of ms, and the reads of one turn all land in it.
 */
const READ_STEPS = 15;
const READS_PER_STEP = 4;
const WRITES_PER_STEP = 1;
/** The model's first turn waits for this gate: the test opens it once the flipper flips. */
const FLIPPING = 'flipping';

/**
 * A minimal MCP server in bash (bash is in every sandbox; node is not in the agent image) that
 * answers initialize and tools/list with no tools, and meanwhile flips t.txt for ever. It stays a
 * few ms longer a plain file: a read takes several steps, any of which seeing the symlink refuses
 * it, so without the pause few reads saw the file (4 of 60 on an idle host, none once under CI).
 */
const FLIPPER_MCP_SERVER = String.raw`
while :; do
  ln -sfn "$HOST_FILE" .t.link && mv -Tf .t.link t.txt
  printf 'plain content\n' > .t.plain && mv -Tf .t.plain t.txt
  sleep 0.005
done &
while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  version=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
  [ -n "$id" ] || continue
  case $line in
    *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"flipper","version":"1.0.0"}}}\n' "$id" "$version" ;;
    *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}\n' "$id" ;;
    *) printf '{"jsonrpc":"2.0","id":%s,"result":{}}\n' "$id" ;;
  esac
done
`;

describe.each(['bubblewrap', 'docker'] as const)(
  'built-in file tools against a symlink flipper in a %s sandbox',
  (backend) => {
    let model: FakeModelServer;
    let env: TestEnvironment;
    let app: TestApp;
    let api: ReturnType<typeof apiClient>;
    let hostDir: string;
    let hostFile: string;

    beforeAll(async () => {
      if (backend === 'docker') {
        // Cached by tag: a no-op once .ci/run (or an earlier test) built it.
        await promisify(execFile)(BUILD_IMAGE, ['--tag', IMAGE], { maxBuffer: 16 << 20 });
      }
      // A host file the service (root) owns, outside every workspace: what an escape would hit.
      hostDir = mkdtempSync(join(tmpdir(), 'ambient-race-host-'));
      hostFile = join(hostDir, 'secret.txt');
      writeFileSync(hostFile, `${MARKER}\n`);
      chmodSync(hostDir, 0o755);
      chmodSync(hostFile, 0o644);
      model = await startFakeModelServer();
      env = createTestEnvironment(`race_${backend}`, model.url);
      app = await startTestApp(env, ['api', 'worker'], {
        'sandbox.backend': backend,
        'sandbox.readonlyPaths': '',
        'sandbox.docker.defaultImage': IMAGE,
      });
      api = apiClient(app.baseUrl, app.apiKey);
    }, 600_000);

    afterAll(async () => {
      await app?.close();
      await env?.destroy();
      await model?.close();
      if (hostDir) rmSync(hostDir, { recursive: true, force: true });
    });

    it('never reads or writes the host file through the flipping symlink', async () => {
      const before = statSync(hostFile);
      const script = `race-${backend}`;
      const steps: FakeStep[] = [];
      for (let step = 0; step < READ_STEPS; step++) {
        const turn = (toolCalls: FakeToolCall[]): FakeStep =>
          step === 0 ? { gate: `${FLIPPING}-${backend}`, then: { toolCalls } } : { toolCalls };
        steps.push(
          turn([
            ...Array.from({ length: READS_PER_STEP }, () => ({
              name: 'read_file',
              arguments: { path: 't.txt' },
            })),
            ...Array.from({ length: WRITES_PER_STEP }, (_, i) => ({
              name: 'write_file',
              arguments: { path: 't.txt', content: `overwritten ${step}.${i}\n` },
            })),
            { name: 'edit_file', arguments: { path: 't.txt', old_string: 'o', new_string: '0' } },
          ]),
        );
      }
      // A file nothing flips: written and edited inside the sandbox, by its user.
      steps.push({
        toolCalls: [
          {
            name: 'write_file',
            arguments: { path: 'kept/notes.txt', content: 'kept by the tools\n' },
          },
          {
            name: 'edit_file',
            arguments: { path: 'kept/notes.txt', old_string: 'kept', new_string: 'made' },
          },
          { name: 'read_file', arguments: { path: 'kept/notes.txt' } },
        ],
      });
      steps.push({ toolCalls: [{ name: 'finish', arguments: { summary: 'raced' } }] });
      model.script(script, steps);

      const created = await api.post('/agent/runs', {
        prompt: `Race the file tools [script:${script}]`,
        config: {
          mcp_servers: {
            flipper: {
              command: 'bash',
              args: ['-c', FLIPPER_MCP_SERVER],
              env: { HOST_FILE: hostFile },
            },
          },
        },
      });
      expect(created.status).toBe(200);
      // The reads start once the flipper flips: seen from this host, t.txt was a symlink and a file.
      const flipped = join(env.workspaceRoot, created.body.run_id as string, 't.txt');
      const seen = new Set<string>();
      await waitFor(
        async () => {
          try {
            seen.add(lstatSync(flipped).isSymbolicLink() ? 'symlink' : 'file');
          } catch {
            // Not there yet, or between its two names.
          }
          return seen.size;
        },
        (states) => states === 2,
        { what: 'the flipper to flip t.txt', timeoutMs: 120_000, intervalMs: 5 },
      );
      model.open(`${FLIPPING}-${backend}`);
      const run = await waitFor(
        async () => (await api.get(`/agent/runs/${created.body.run_id}`)).body,
        (body) => ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED'].includes(body.state),
        { what: 'the racing run to end', timeoutMs: 180_000, intervalMs: 200 },
      );
      expect(run.state).toBe('SUCCEEDED');

      // The last model request holds every tool result but finish's.
      const last = model.requests.filter((r) => r.script === script).at(-1)!;
      const calls = new Map<string, string>();
      const results: { tool: string; content: string }[] = [];
      for (const message of last.body.messages as {
        role: string;
        content?: unknown;
        tool_call_id?: string;
        tool_calls?: { id: string; function: { name: string } }[];
      }[]) {
        for (const call of message.tool_calls ?? []) calls.set(call.id, call.function.name);
        if (message.role === 'tool') {
          results.push({
            tool: calls.get(message.tool_call_id!)!,
            content: String(message.content),
          });
        }
      }
      const reads = results.filter((r) => r.tool === 'read_file').map((r) => r.content);
      expect(reads.length).toBe(READ_STEPS * READS_PER_STEP + 1);
      expect(reads.at(-1)).toBe('     1\tmade by the tools\n');
      const kept = statSync(join(env.workspaceRoot, run.run_id, 'kept', 'notes.txt'));
      // Created by the sandbox's user: uid 1000 in the container; bubblewrap maps it to ours.
      expect(kept.uid).toBe(backend === 'docker' ? 1000 : process.getuid!());
      expect(reads.filter((text) => text.includes(MARKER))).toEqual([]);
      expect(results.filter((r) => r.content.includes(MARKER))).toEqual([]);
      // The flipper was really flipping while the tools ran: both states were seen. (What the
      // reads came to, by kind, is in the message when not.)
      const kinds = new Map<string, number>();
      for (const text of reads.slice(0, -1)) {
        const kind = /^\s+1\t(plain content|overwritten|0verwritten)/.test(text)
          ? 'a plain file'
          : text.split('\n')[0].slice(0, 120);
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }
      expect({
        plain: kinds.has('a plain file'),
        refused: [...kinds.keys()].some((kind) => kind.startsWith('Error:')),
        kinds: Object.fromEntries(kinds),
      }).toMatchObject({ plain: true, refused: true });

      const after = statSync(hostFile);
      expect(readFileSync(hostFile, 'utf8')).toBe(`${MARKER}\n`);
      expect(after.mtimeMs).toBe(before.mtimeMs);
      expect(after.uid).toBe(before.uid);
    }, 240_000);
  },
);
