import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, renderEnvelope } from '../errors';
import type { Logger } from '../observability/logger';
import { isStoreUnreachable } from '../errors/unreachable';

/**
 * An error no route raised on purpose: the store being unreachable is a 503 (nothing was done, retry shortly),
 * anything else a 500 that says nothing of its cause.
 */
export function unexpectedError(err: unknown): ApiError {
  if (isStoreUnreachable(err)) {
    return new ApiError(
      'unavailable',
      'The store is unreachable (Redis restarting or failing over); nothing was done, retry',
      { 'Retry-After': '1' },
    );
  }
  return new ApiError('internal', 'Internal server error');
}

/** Logs a 5xx of Genway's own: a store outage as a warning (it passes), anything else as an error. */
export function logServerError(logger: Logger, apiError: ApiError, err: unknown, fields: object): void {
  if (apiError.status === 503) logger.warn({ err, ...fields }, 'store unreachable');
  else if (apiError.status >= 500) logger.error({ err, ...fields }, 'request failed');
}

export const unknownRoute: RequestHandler = (req) => {
  throw new ApiError('not_found', `No route for ${req.method} ${req.path}`);
};

interface BodyParserError {
  type: string;
  limit?: number;
  message: string;
}

function isBodyParserError(err: unknown): err is BodyParserError {
  return typeof err === 'object' && err !== null && typeof (err as { type?: unknown }).type === 'string';
}

/** Maps anything thrown to the closed set of API errors; a client mistake never becomes a 500. */
function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  // A path Express could not decode (`%E0%A4%A`, `%ZZ`): its router throws a URIError with status 400.
  if (err instanceof URIError) return new ApiError('invalid_request', `Malformed percent-escape in the path`);
  if (isBodyParserError(err)) {
    switch (err.type) {
      case 'entity.parse.failed':
        return new ApiError('invalid_request', `Malformed JSON body: ${err.message}`);
      case 'entity.too.large':
        return new ApiError('payload_too_large', `Request body exceeds the limit of ${err.limit} bytes`);
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return new ApiError('invalid_request', `Unsupported body encoding: ${err.message}`);
      case 'request.aborted':
      case 'request.size.invalid':
        return new ApiError('invalid_request', `Request body incomplete: ${err.message}`);
    }
  }
  return unexpectedError(err);
}

/** The one error path: every thrown error ends here and leaves as an envelope (or the route's vendor shape). */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const apiError = toApiError(err);
    logServerError(logger, apiError, err, { requestId: res.locals.requestId, route: res.locals.route });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (req.readable) req.resume(); // drain an unread body so the connection can be reused
    renderEnvelope(res, apiError);
  };
}
