import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError, renderEnvelope } from '../errors';
import type { Logger } from '../observability/logger';

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
  return new ApiError('internal', 'Internal server error');
}

/** The one error path: every thrown error ends here and leaves as an envelope (or the route's vendor shape). */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const apiError = toApiError(err);
    if (apiError.status >= 500) {
      logger.error({ err, requestId: res.locals.requestId, route: res.locals.route }, 'request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (req.readable) req.resume(); // drain an unread body so the connection can be reused
    renderEnvelope(res, apiError);
  };
}
