import type { RequestHandler } from 'express';
import type { RateLimit } from '../config';
import { ApiError } from '../errors';
import type { RateLimiter } from '../store';

/** The 429 of a refused request: the limit in the message, whole seconds in Retry-After. */
export function rateLimitError(limit: RateLimit, retryAfterMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError(
    'rate_limited',
    `Rate limit reached for this API key (${limit.ratePerSec} requests/s, burst ${limit.burst}); retry after ${seconds} s`,
    { 'Retry-After': String(seconds) },
  );
}

/**
 * The per-key token bucket as a thrown 429 (the caller decides the body shape through the error renderer).
 * Returns normally when the request may proceed.
 */
export async function enforceRateLimit(
  limiter: RateLimiter,
  keyId: string,
  limit: RateLimit,
  onReject: () => void,
): Promise<void> {
  const decision = await limiter.take(keyId, limit);
  if (decision.allowed) return;
  onReject();
  throw rateLimitError(limit, decision.retryAfterMs);
}

/** Middleware form, after requireApiKey: the key's own limit, else the configured default. */
export function rateLimit(
  limiter: RateLimiter,
  defaultLimit: RateLimit,
  onReject: () => void,
): RequestHandler {
  return async (_req, res, next) => {
    const auth = res.locals.auth!;
    await enforceRateLimit(limiter, auth.keyId, auth.rateLimit ?? defaultLimit, onReject);
    next();
  };
}
