import { lstat, realpath } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { optionalPositiveInt, requiredString, ToolArgumentError } from './file-tools';
import { globToRegExp } from './glob-pattern';
import { regexSearch, type SearchFile } from './regex-search';
import { functionTool, type AgentTool, type ToolScope } from './tool.types';
import { readWorkspaceDirectory } from './workspace-directory';
import { resolveInWorkspace, workspaceRelative } from './workspace-paths';

const DEFAULT_LIST_LIMIT = 200;
const DEFAULT_MATCH_LIMIT = 100;
const MAX_LIMIT = 1000;
/** Lines of matches are cut to this many characters. */
const MAX_MATCH_LINE_CHARS = 300;
/** search_files skips files larger than this. */
const MAX_SEARCHED_FILE_BYTES = 2 * 1024 * 1024;
/** search_files searches at most this many files in one call. */
const MAX_SEARCHED_FILES = 50_000;
/** Directories that are never walked: version-control internals, not the user's files. */
const SKIPPED_DIRS = new Set(['.git', '.hg', '.svn']);

export const listFilesTool: AgentTool = {
  definition: functionTool(
    'list_files',
    'List a directory of the workspace (directories end with "/"). Recursive listings skip .git.',
    {
      path: { type: 'string', description: 'Directory relative to the workspace (default ".").' },
      recursive: { type: 'boolean', description: 'Include subdirectories (default false).' },
      limit: { type: 'integer', description: `Maximum entries (default ${DEFAULT_LIST_LIMIT}).` },
    },
  ),
  async run(args, scope) {
    const path = args.path === undefined ? '.' : requiredString(args, 'path');
    if (args.recursive !== undefined && typeof args.recursive !== 'boolean') {
      throw new ToolArgumentError('"recursive" must be a boolean');
    }
    const limit = Math.min(optionalPositiveInt(args, 'limit') ?? DEFAULT_LIST_LIMIT, MAX_LIMIT);
    const dir = await existingPath(scope, path);
    if (!dir.isDir) throw new ToolArgumentError(`${path} is not a directory`);
    const entries: string[] = [];
    let truncated = false;
    for await (const entry of walk(dir.root, dir.absolute, args.recursive === true, dir.relative)) {
      if (entries.length === limit) {
        truncated = true;
        break;
      }
      entries.push(entry.isDir ? `${entry.relative}/` : entry.relative);
    }
    if (entries.length === 0) return { content: `${path} is empty.` };
    const more = truncated ? `\n… more entries; raise limit or list a subdirectory.` : '';
    return { content: entries.join('\n') + more };
  },
};

export const searchFilesTool: AgentTool = {
  definition: functionTool(
    'search_files',
    'Search the text files of the workspace for a regular expression (JavaScript syntax). ' +
      'Returns matching lines as "path:line: text".',
    {
      pattern: { type: 'string', description: 'Regular expression to search for.' },
      path: { type: 'string', description: 'Directory or file to search (default ".").' },
      glob: { type: 'string', description: 'Only files matching this glob, e.g. "*.ts".' },
      limit: { type: 'integer', description: `Maximum matches (default ${DEFAULT_MATCH_LIMIT}).` },
    },
    ['pattern'],
  ),
  async run(args, scope) {
    const pattern = requiredString(args, 'pattern');
    try {
      new RegExp(pattern);
    } catch (err) {
      throw new ToolArgumentError(`"pattern" is not a valid regular expression: ${errText(err)}`);
    }
    const glob = args.glob === undefined ? undefined : globToRegExp(requiredString(args, 'glob'));
    const limit = Math.min(optionalPositiveInt(args, 'limit') ?? DEFAULT_MATCH_LIMIT, MAX_LIMIT);
    const path = args.path === undefined ? '.' : requiredString(args, 'path');
    const target = await existingPath(scope, path);
    const files: SearchFile[] = [];
    for await (const file of target.isDir
      ? walk(target.root, target.absolute, true, target.relative)
      : [target]) {
      if (!file.isFile) continue;
      const name = glob?.matchesBaseName ? posix.basename(file.relative) : file.relative;
      if (glob && !glob.regexp.test(name)) continue;
      if (files.length === MAX_SEARCHED_FILES) break;
      files.push({ relative: file.relative, absolute: file.absolute });
    }
    const result = await regexSearch({
      root: target.root,
      files,
      pattern,
      limit,
      maxFileBytes: MAX_SEARCHED_FILE_BYTES,
      maxLineChars: MAX_MATCH_LINE_CHARS,
      timeoutMs: scope.commandTimeoutSeconds * 1000,
      signal: scope.signal,
    });
    if ('timedOut' in result) {
      throw new ToolArgumentError(
        `the search took longer than ${scope.commandTimeoutSeconds} seconds; use a simpler ` +
          'pattern or narrow path or glob',
      );
    }
    if ('aborted' in result) return { content: 'Search stopped.' };
    const notes = [
      ...(result.more ? ['… more matches; raise limit or narrow path.'] : []),
      ...(files.length === MAX_SEARCHED_FILES
        ? [`… only the first ${MAX_SEARCHED_FILES} files were searched; narrow path or glob.`]
        : []),
    ];
    return {
      content: [...(result.matches.length ? result.matches : ['No matches.']), ...notes].join('\n'),
    };
  },
};

interface WalkEntry {
  relative: string;
  absolute: string;
  isDir: boolean;
  isFile: boolean;
}

/**
 * A path of the workspace that exists, with its `/`-separated relative form ('' for the root) and
 * the workspace's real path. What it says may be stale by the time it is used: the walk and the
 * search open what they read and check the opened descriptor.
 */
async function existingPath(
  scope: ToolScope,
  path: string,
): Promise<{ root: string; absolute: string; relative: string; isDir: boolean; isFile: boolean }> {
  const absolute = await resolveInWorkspace(scope.workspaceDir, path);
  const info = await lstat(absolute).catch(() => undefined);
  if (!info) throw new ToolArgumentError(`${path} does not exist`);
  const root = await realpath(scope.workspaceDir);
  const relative = workspaceRelative(root, absolute);
  return {
    root,
    absolute,
    relative: relative === '.' ? '' : relative,
    isDir: info.isDirectory(),
    isFile: info.isFile(),
  };
}

/** Entries below `dir` in name order, paths relative to the workspace; symlinks are not followed. */
async function* walk(
  root: string,
  dir: string,
  recursive: boolean,
  base: string,
): AsyncGenerator<WalkEntry> {
  const entries = await readWorkspaceDirectory(root, dir);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const relative = base ? `${base}/${entry.name}` : entry.name;
    const absolute = join(dir, entry.name);
    const isDir = entry.isDirectory();
    yield { relative, absolute, isDir, isFile: entry.isFile() };
    if (isDir && recursive && !SKIPPED_DIRS.has(entry.name)) {
      yield* walk(root, absolute, true, relative);
    }
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
