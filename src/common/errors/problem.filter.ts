import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from './api-error';
import { ErrorCode } from './error-codes';
import { loggedPath } from '../logging/http-logging';
import { requestIdOf } from '../request-id';
import { buildProblem } from './problem';
import { isBackingServiceUnavailable } from './unavailable';

const CODE_FOR_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'authentication_required',
  403: 'not_authorized',
  404: 'resource_not_found',
  405: 'operation_not_supported',
  409: 'conflict',
  413: 'invalid_request',
  415: 'invalid_request',
  422: 'operation_not_supported',
  429: 'resource_unavailable',
  503: 'resource_unavailable',
};

/** Body-parser errors carry `type` and `status`; they are the client's fault. */
interface BodyParserError {
  type?: string;
  status?: number;
  message?: string;
}

/** Turns every exception into the Oz `Error` model as application/problem+json. */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    if (response.headersSent) return;
    const instance = request.originalUrl?.split('?')[0];
    let problem;
    let headers: Record<string, string> = {};

    if (exception instanceof ApiError) {
      problem = buildProblem({
        code: exception.code,
        title: exception.title,
        status: exception.status,
        detail: exception.detail,
        instance,
        retryable: exception.retryable,
      });
      headers = exception.headers;
    } else if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const code =
        CODE_FOR_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');
      const detail =
        status === 404 ? `no route for ${request.method} ${instance}` : exception.message;
      problem = buildProblem({ code, title: titleFor(code), status, detail, instance });
    } else if (isBodyParserError(exception)) {
      const status = exception.status!;
      const detail =
        exception.type === 'entity.too.large'
          ? 'request body is too large'
          : exception.type === 'entity.parse.failed'
            ? 'request body is not valid JSON'
            : (exception.message ?? 'unreadable request body');
      problem = buildProblem({
        code: 'invalid_request',
        title: 'Invalid request',
        status,
        detail,
        instance,
      });
    } else {
      this.logger.error(
        `${request.method} ${loggedPath(instance)} failed: ${(exception as Error)?.stack ?? String(exception)}`,
      );
      const unavailable = isBackingServiceUnavailable(exception);
      problem = buildProblem({
        code: unavailable ? 'resource_unavailable' : 'internal_error',
        title: unavailable ? 'Service temporarily unavailable' : 'Internal error',
        status: unavailable ? 503 : 500,
        detail: unavailable
          ? 'a backing service (database or queue) is not reachable; retry shortly'
          : undefined,
        instance,
        retryable: true,
      });
      if (unavailable) headers['Retry-After'] = '5';
    }
    const traceId = requestIdOf(response);
    if (traceId) problem.trace_id = traceId;
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    response.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
  }
}

function titleFor(code: ErrorCode): string {
  return new ApiError(code).title;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  const e = err as BodyParserError;
  return !!e && typeof e.type === 'string' && typeof e.status === 'number' && e.status < 500;
}
