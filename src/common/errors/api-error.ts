import { ERROR_CODES, ErrorCode } from './error-codes';

/**
 * The one exception type the API raises on purpose. The global filter turns it into the Oz
 * `Error` model; `title` defaults to the code's title and `detail` says what exactly was wrong.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly retryable: boolean;
  readonly title: string;
  readonly headers: Record<string, string>;

  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    options: {
      title?: string;
      status?: number;
      headers?: Record<string, string>;
      retryable?: boolean;
    } = {},
  ) {
    super(detail ?? ERROR_CODES[code].title);
    this.status = options.status ?? ERROR_CODES[code].status;
    this.retryable = options.retryable ?? ERROR_CODES[code].retryable;
    this.title = options.title ?? ERROR_CODES[code].title;
    this.headers = options.headers ?? {};
  }

  static invalid(field: string, why: string): ApiError {
    return new ApiError('invalid_request', `${field}: ${why}`);
  }

  static notFound(what: string): ApiError {
    return new ApiError('resource_not_found', `${what} not found`);
  }
}
