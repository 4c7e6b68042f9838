import type { RequestHandler } from 'express';
import { secretsEqual, type KeyHashMemo } from '../accounts/api-keys';
import type { AccountsService, AuthContext, AuthFailure, Recalled } from '../accounts/service';
import type { RateLimit } from '../config';
import { ApiError } from '../errors';
import type { KeyGate, KeyGateResult } from '../accounts/store';
import { rateLimitError } from './rate-limit';

export type AuthMessages = Record<AuthFailure, string>;

const AUTH_FAILURE_MESSAGES: AuthMessages = {
  missing: 'Missing API key: send the header Authorization: Bearer <API_KEY>',
  malformed: 'Malformed API key: expected Authorization: Bearer gwk_...',
  unknown: 'Invalid API key',
  revoked: 'Invalid API key: this key has been revoked',
  expired: 'Invalid API key: this key has expired',
};

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return header ? BEARER.exec(header)?.[1] : undefined;
}

/**
 * The API key a client presented in `Authorization`: the Bearer token, or else the header's whole value, so a key
 * sent without the scheme is refused as malformed (naming the expected form) rather than as missing.
 */
export function keyInAuthorization(header: string | undefined): string | undefined {
  return bearerToken(header) ?? (header?.trim() || undefined);
}

export interface Admission {
  accounts: AccountsService;
  keyGate: KeyGate;
  defaultLimit: RateLimit;
  /** Counts a 429 (by surface, in metrics). */
  onRateLimited(): void;
}

/**
 * Who may call, for the task API and the gateway alike: the key's record (recalled, possibly cached), then
 * revocation and the key's token bucket in one store step. Throws 401 for a missing, malformed, unknown or revoked
 * key and 429 over the limit; the caller renders them (envelope or vendor shape). Answers at once, without a
 * promise, when both steps could decide from memory (a recalled key, a local bucket or lease): the common call.
 * `memo` spares the key's hash on a connection that presents the same key again (the gateway's).
 */
export function admit(
  admission: Admission,
  presented: string | undefined,
  messages: AuthMessages = AUTH_FAILURE_MESSAGES,
  memo?: KeyHashMemo,
): AuthContext | Promise<AuthContext> {
  const recalled = admission.accounts.recall(presented, memo);
  return recalled instanceof Promise
    ? recalled.then((r) => pass(admission, r, messages))
    : pass(admission, recalled, messages);
}

function pass(
  admission: Admission,
  recalled: Recalled | AuthFailure,
  messages: AuthMessages,
): AuthContext | Promise<AuthContext> {
  if (typeof recalled === 'string') throw unauthorized(messages[recalled]);
  const limit = recalled.auth.rateLimit ?? admission.defaultLimit;
  const gate = admission.keyGate.pass(recalled.hash, recalled.auth.keyId, limit);
  return gate instanceof Promise
    ? gate.then((g) => admitted(admission, recalled, limit, g, messages))
    : admitted(admission, recalled, limit, gate, messages);
}

function admitted(
  admission: Admission,
  { auth, hash }: Recalled,
  limit: RateLimit,
  gate: KeyGateResult,
  messages: AuthMessages,
): AuthContext {
  if (gate === 'unknown' || gate === 'revoked' || gate === 'expired') {
    admission.accounts.forget(hash);
    throw unauthorized(messages[gate]);
  }
  if (!gate.allowed) {
    admission.onRateLimited();
    throw rateLimitError(limit, gate.retryAfterMs);
  }
  admission.accounts.noteUse(hash);
  return auth;
}

function unauthorized(message: string): ApiError {
  return new ApiError('unauthorized', message, { 'WWW-Authenticate': 'Bearer' });
}

/**
 * The 401 messages on a vendor's routes: they name where that vendor's SDKs send a key, since that is where its
 * users put their Genway key (`Authorization: Bearer` would mislead an x-api-key client).
 */
export function vendorAuthMessages(carriers: readonly string[]): AuthMessages {
  const where =
    carriers.length > 1 ? `${carriers.slice(0, -1).join(', ')} or ${carriers.at(-1)}` : carriers[0];
  return {
    ...AUTH_FAILURE_MESSAGES,
    missing: `Missing API key: send your Genway key in ${where}`,
    malformed: `Malformed API key: a Genway key starts with gwk_ (sent in ${where})`,
  };
}

/** The header with which the admin token acts for one account on the task API (the console's drill-down). */
export const ACCOUNT_HEADER = 'genway-account';

/** The key id an admin's calls for an account are recorded under (tasks, usage by key). */
export const ADMIN_KEY_ID = 'admin';

/**
 * Task API admission: `Authorization: Bearer <API_KEY>`, then the key's rate limit. With `genway-account: <id>`,
 * the caller must hold the admin token instead, and acts for that account without a model allow-list or a rate
 * limit (the admin API can already do everything an account can).
 */
export function requireApiKey(admission: Admission, adminToken?: string): RequestHandler {
  return async (req, res, next) => {
    const actingFor = req.headers[ACCOUNT_HEADER];
    res.locals.auth =
      actingFor === undefined
        ? await admit(admission, keyInAuthorization(req.headers.authorization))
        : await actForAccount(
            admission.accounts,
            adminToken,
            bearerToken(req.headers.authorization),
            actingFor,
          );
    next();
  };
}

async function actForAccount(
  accounts: AccountsService,
  adminToken: string | undefined,
  presented: string | undefined,
  accountId: string | string[],
): Promise<AuthContext> {
  if (!adminToken || presented === undefined || !secretsEqual(presented, adminToken))
    throw unauthorized(`Only the admin token may act for an account (header ${ACCOUNT_HEADER})`);
  if (typeof accountId !== 'string' || accountId.length === 0 || accountId.length > 200)
    throw new ApiError('invalid_request', `header ${ACCOUNT_HEADER}: must be one account id`);
  await accounts.describeAccount(accountId); // 404 for an unknown account
  return { keyId: ADMIN_KEY_ID, accountId, models: null, rateLimit: null };
}
