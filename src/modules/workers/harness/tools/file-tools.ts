import { realpath } from 'node:fs/promises';
import { readInSandbox, writeInSandbox } from './sandbox-file-io';
import {
  functionTool,
  toolError,
  type AgentTool,
  type ToolOutcome,
  type ToolScope,
} from './tool.types';
import { resolveInWorkspace, workspaceRelative } from './workspace-paths';

/** read_file returns at most this many characters; the model pages on with offset/limit. */
export const MAX_READ_CHARS = 64 * 1024;
const DEFAULT_READ_LINES = 2000;
/** Files larger than this are not read whole; the model should use search_files or a command. */
const MAX_FILE_BYTES = 10 * 1024 * 1024;

export const readFileTool: AgentTool = {
  definition: functionTool(
    'read_file',
    'Read a text file of the workspace. Returns its lines prefixed with line numbers ' +
      `(at most ${DEFAULT_READ_LINES} lines or ${MAX_READ_CHARS / 1024} KiB per call; page on ` +
      'with offset).',
    {
      path: { type: 'string', description: 'Path relative to the workspace root.' },
      offset: { type: 'integer', description: 'First line to return, 1-based (default 1).' },
      limit: { type: 'integer', description: `Number of lines (default ${DEFAULT_READ_LINES}).` },
    },
    ['path'],
  ),
  async run(args, scope) {
    const path = requiredString(args, 'path');
    const offset = optionalPositiveInt(args, 'offset') ?? 1;
    const limit = optionalPositiveInt(args, 'limit') ?? DEFAULT_READ_LINES;
    const text = await readTextFile(scope, path);
    const lines = text.split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    if (offset > lines.length && !(offset === 1 && lines.length === 0)) {
      return toolError(`offset ${offset} is beyond the end of ${path} (${lines.length} lines).`);
    }
    let output = '';
    let last = offset - 1;
    for (let i = offset - 1; i < Math.min(lines.length, offset - 1 + limit); i++) {
      const line = `${String(i + 1).padStart(6)}\t${lines[i]}\n`;
      if (output.length + line.length > MAX_READ_CHARS) break;
      output += line;
      last = i + 1;
    }
    if (last < lines.length) {
      output += `… ${lines.length - last} more lines; continue with offset ${last + 1}.\n`;
    }
    return { content: output || '(empty file)' };
  },
};

export const writeFileTool: AgentTool = {
  writes: true,
  definition: functionTool(
    'write_file',
    'Create or overwrite a file of the workspace with the given content (parent directories ' +
      'are created).',
    {
      path: { type: 'string', description: 'Path relative to the workspace root.' },
      content: { type: 'string', description: 'The complete new content of the file.' },
    },
    ['path', 'content'],
  ),
  async run(args, scope) {
    const path = requiredString(args, 'path');
    if (typeof args.content !== 'string') throw new ToolArgumentError('"content" must be a string');
    // Written inside the sandbox, as its own user: nothing to adopt afterwards.
    await writeInSandbox(scope, await sandboxRelative(scope, path), path, args.content);
    return { content: `Wrote ${Buffer.byteLength(args.content)} bytes to ${path}.` };
  },
};

export const editFileTool: AgentTool = {
  writes: true,
  definition: functionTool(
    'edit_file',
    'Replace an exact string in a file of the workspace. old_string must match exactly once ' +
      '(include surrounding lines to make it unique) unless replace_all is true.',
    {
      path: { type: 'string', description: 'Path relative to the workspace root.' },
      old_string: { type: 'string', description: 'The exact text to replace.' },
      new_string: { type: 'string', description: 'The replacement text.' },
      replace_all: { type: 'boolean', description: 'Replace every occurrence (default false).' },
    },
    ['path', 'old_string', 'new_string'],
  ),
  async run(args, scope): Promise<ToolOutcome> {
    const path = requiredString(args, 'path');
    const { old_string: oldString, new_string: newString, replace_all: replaceAll } = args;
    if (typeof oldString !== 'string' || oldString === '') {
      throw new ToolArgumentError('"old_string" must be a non-empty string');
    }
    if (typeof newString !== 'string') throw new ToolArgumentError('"new_string" must be a string');
    if (replaceAll !== undefined && typeof replaceAll !== 'boolean') {
      throw new ToolArgumentError('"replace_all" must be a boolean');
    }
    if (oldString === newString) return toolError('old_string and new_string are identical.');
    const text = await readTextFile(scope, path);
    const count = text.split(oldString).length - 1;
    if (count === 0) return toolError(`old_string was not found in ${path}; nothing changed.`);
    if (count > 1 && !replaceAll) {
      return toolError(
        `old_string occurs ${count} times in ${path}; nothing changed. Include more context ` +
          'to make it unique, or set replace_all to true.',
      );
    }
    const edited = text.split(oldString).join(newString);
    await writeInSandbox(scope, await sandboxRelative(scope, path), path, edited);
    return { content: `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${path}.` };
  },
};

/** Invalid arguments of a tool call; the message goes back to the model. */
export class ToolArgumentError extends Error {}

export function requiredString(args: Record<string, unknown>, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value === '') {
    throw new ToolArgumentError(`"${name}" must be a non-empty string`);
  }
  return value;
}

export function optionalPositiveInt(
  args: Record<string, unknown>,
  name: string,
): number | undefined {
  const value = args[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new ToolArgumentError(`"${name}" must be a positive integer`);
  }
  return value;
}

/**
 * The workspace-relative form of `path` for the sandbox's file I/O, once the host-side check has
 * refused what visibly leaves the workspace (absolute, `..`, symlinks pointing out) with a clear
 * message. The check can be raced; the I/O inside the sandbox cannot leave it.
 */
async function sandboxRelative(scope: ToolScope, path: string): Promise<string> {
  const target = await resolveInWorkspace(scope.workspaceDir, path);
  return `./${workspaceRelative(await realpath(scope.workspaceDir), target)}`;
}

async function readTextFile(scope: ToolScope, path: string): Promise<string> {
  const relative = await sandboxRelative(scope, path);
  const bytes = await readInSandbox(scope, relative, path, MAX_FILE_BYTES);
  if (bytes.length > MAX_FILE_BYTES) {
    throw new ToolArgumentError(`${path} is larger than 10 MiB; use search_files or run_command`);
  }
  if (bytes.subarray(0, 8192).includes(0)) {
    throw new ToolArgumentError(`${path} is a binary file`);
  }
  return bytes.toString('utf8');
}
