/** OpenAI function names allow only these characters, at most 64 of them. */
const MAX_NAME_LENGTH = 64;

/**
 * The name under which an MCP tool is offered to the model: `mcp__<server>__<tool>`, with
 * characters a function name may not contain replaced by `_`, cut to 64 characters and made
 * unique with a numeric suffix when two tools would otherwise share a name.
 */
export function mcpToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const clean = (s: string): string => s.replace(/[^A-Za-z0-9_-]/g, '_');
  const base = `mcp__${clean(server)}__${clean(tool)}`.slice(0, MAX_NAME_LENGTH);
  let name = base;
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = base.slice(0, MAX_NAME_LENGTH - suffix.length) + suffix;
  }
  return name;
}

export function isMcpToolName(name: string): boolean {
  return name.startsWith('mcp__');
}
