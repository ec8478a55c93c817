import { SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { EgressRefusedError } from '../../../../common/egress/egress-guard';

/** The error and its causes, outermost first (bounded: causes can form a cycle). */
function chain(err: unknown): unknown[] {
  const errors: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && errors.length < 8;) {
    errors.push(e);
    e = e instanceof Error ? e.cause : undefined;
  }
  return errors;
}

/** The egress refusal inside `err`, if the connection was refused by the policy. */
export function egressRefusal(err: unknown): EgressRefusedError | undefined {
  return chain(err).find((e): e is EgressRefusedError => e instanceof EgressRefusedError);
}

/**
 * Why a `url` MCP server failed, in words that never carry what the server sent (the SDK's
 * messages quote response bodies): an egress refusal, the HTTP status, the socket error code,
 * a timeout or the MCP error code.
 */
export function remoteFailure(err: unknown): string {
  const errors = chain(err);
  const refused = egressRefusal(err);
  if (refused) return refused.message;
  for (const e of errors) {
    if ((e instanceof StreamableHTTPError || e instanceof SseError) && (e.code ?? 0) > 0) {
      return `the server answered HTTP ${e.code}`;
    }
  }
  const mcp = errors.find((e): e is McpError => e instanceof McpError);
  if (mcp?.code === (ErrorCode.RequestTimeout as number))
    return 'the server did not answer in time';
  const code = errors
    .map((e) => (e as { code?: unknown }).code)
    .find((c): c is string => typeof c === 'string' && /^[A-Z][A-Z0-9_]+$/.test(c));
  if (code) return `the connection failed (${code})`;
  if (mcp) return `the server answered MCP error ${mcp.code}`;
  return 'the server did not answer as an MCP server';
}

/** A server URL as shown in errors: no credentials, query or fragment. */
export function displayUrl(url: string | undefined): string {
  try {
    const parsed = new URL(url ?? '');
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'an invalid URL';
  }
}
