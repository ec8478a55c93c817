import type { Response } from 'express';
import { buildProblem } from '../../../common/errors/problem';
import { requestIdOf } from '../../../common/request-id';
import { Diagnostic, formatDiagnostic } from './definition/diagnostics';

/**
 * A refused definition: the Oz Error model (400 invalid_request) whose `detail` names the first
 * problem, plus `diagnostics` with every problem's file, line, column and reason.
 */
export function sendInvalidDefinition(res: Response, diagnostics: Diagnostic[]) {
  const first = diagnostics[0];
  const more = diagnostics.length > 1 ? ` (and ${diagnostics.length - 1} more problem(s))` : '';
  const problem = buildProblem({
    code: 'invalid_request',
    title: 'Invalid request',
    status: 400,
    detail: `the definition is invalid and nothing was changed: ${first ? formatDiagnostic(first) : 'no files'}${more}`,
    instance: res.req?.originalUrl?.split('?')[0],
    retryable: false,
    traceId: requestIdOf(res),
  });
  res
    .status(400)
    .type('application/problem+json')
    .send(JSON.stringify({ ...problem, diagnostics }));
}
