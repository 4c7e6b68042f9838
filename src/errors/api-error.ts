/** The closed set of errors Genway raises, each with its HTTP status (which is also the envelope `code`). */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_balance: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
  bad_gateway: 502,
  /** The store (Redis) does not answer: nothing was done, retry (Retry-After). */
  unavailable: 503,
  gateway_timeout: 504,
  loop_detected: 508,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra response headers, e.g. Retry-After or Allow. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

export const badRequest = (message: string) => new ApiError('invalid_request', message);
export const notFound = (message = 'Not found') => new ApiError('not_found', message);
