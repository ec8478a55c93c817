import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../../../common/errors/api-error';
import { SCIM_CONTENT_TYPE, ScimError } from './scim-resources';

/** Every failure of a SCIM route as a SCIM Error (RFC 7644 §3.12), as providers expect it. */
@Catch()
export class ScimErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Scim');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) return;
    const error =
      exception instanceof ScimError
        ? exception
        : exception instanceof ApiError
          ? new ScimError(exception.status, exception.detail ?? exception.title)
          : exception instanceof HttpException
            ? new ScimError(exception.getStatus(), exception.message)
            : this.internal(exception);
    if (error.status === 401) response.setHeader('WWW-Authenticate', 'Bearer realm="scim"');
    response.status(error.status).type(SCIM_CONTENT_TYPE).send(JSON.stringify(error.body));
  }

  private internal(exception: unknown): ScimError {
    this.logger.error(`SCIM request failed: ${(exception as Error)?.stack ?? String(exception)}`);
    return new ScimError(500, 'internal error');
  }
}
