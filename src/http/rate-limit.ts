import type { RateLimit } from '../config';
import { ApiError } from '../errors';

/** The 429 of a refused request: the limit in the message, whole seconds in Retry-After. */
export function rateLimitError(limit: RateLimit, retryAfterMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError(
    'rate_limited',
    `Rate limit reached for this API key (${limit.ratePerSec} requests/s, burst ${limit.burst}); retry after ${seconds} s`,
    { 'Retry-After': String(seconds) },
  );
}
