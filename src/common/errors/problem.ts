import { ErrorCode } from './error-codes';

/** The Oz `Error` body (RFC 7807 with the `error` extension kept for older clients). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  error: string;
  detail?: string;
  instance?: string;
  retryable?: boolean;
  /** The request's id (`X-Request-Id`), for support requests and logs. */
  trace_id?: string;
}

const DOCS_BASE = 'https://docs.warp.dev/reference/api-and-sdk/troubleshooting/errors/';

export function buildProblem(args: {
  code: ErrorCode;
  title: string;
  status: number;
  detail?: string;
  instance?: string;
  retryable?: boolean;
  traceId?: string;
}): Problem {
  const problem: Problem = {
    type: `${DOCS_BASE}${args.code.replace(/_/g, '-')}`,
    title: args.title,
    status: args.status,
    error: args.detail ? `${args.title} (${args.detail})` : args.title,
  };
  if (args.detail) problem.detail = args.detail;
  if (args.instance) problem.instance = args.instance;
  if (args.retryable !== undefined) problem.retryable = args.retryable;
  if (args.traceId) problem.trace_id = args.traceId;
  return problem;
}
