import type { Response } from 'express';
import { ErrorCode } from '../common/errors/error-codes';
import { buildProblem } from '../common/errors/problem';

/** Answers with the Oz Error model, as the API does. */
export function sendProblem(
  res: Response,
  status: number,
  code: ErrorCode,
  detail: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  const problem = buildProblem({
    code,
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    instance: res.req?.originalUrl
      ?.split('?')[0]
      ?.replace(/(\/webhooks\/w\/[^/]+)\/.+$/, '$1/{token}'),
    retryable: status === 429 || status === 503,
  });
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(status).type('application/problem+json').send(JSON.stringify(problem));
}

export function sendAccepted(res: Response, deliveryId: string): void {
  res
    .status(202)
    .type('application/json')
    .send(JSON.stringify({ delivery_id: deliveryId }));
}

const TITLES: Record<number, string> = {
  400: 'Invalid request',
  401: 'Authentication required',
  404: 'Resource not found',
  405: 'Method not allowed',
  413: 'Payload too large',
  429: 'Too many requests',
  503: 'Service temporarily unavailable',
};
