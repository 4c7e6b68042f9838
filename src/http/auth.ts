import type { RequestHandler } from 'express';
import type { AccountsService, AuthFailure } from '../accounts/service';
import { ApiError } from '../errors';

const AUTH_FAILURE_MESSAGES: Record<AuthFailure, string> = {
  missing: 'Missing API key: send the header Authorization: Bearer <API_KEY>',
  malformed: 'Malformed API key: expected Authorization: Bearer gwk_...',
  unknown: 'Invalid API key',
  revoked: 'Invalid API key: this key has been revoked',
};

export function authFailureMessage(failure: AuthFailure): string {
  return AUTH_FAILURE_MESSAGES[failure];
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : header.trim() || undefined;
}

/** Task API authentication: `Authorization: Bearer <API_KEY>`; 401 for a missing, malformed, unknown or revoked key. */
export function requireApiKey(accounts: AccountsService): RequestHandler {
  return async (req, res, next) => {
    const result = await accounts.authenticate(bearerToken(req.headers.authorization));
    if (typeof result === 'string') {
      throw new ApiError('unauthorized', AUTH_FAILURE_MESSAGES[result], { 'WWW-Authenticate': 'Bearer' });
    }
    res.locals.auth = result;
    next();
  };
}
