import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { secretsEqual } from '../accounts/api-keys';
import type { AccountsService } from '../accounts/service';
import { WEBHOOK_SCHEMES } from '../accounts/store';
import { rateLimitSchema } from '../config';
import { ApiError, ok } from '../errors';
import { bearerToken } from '../http/auth';
import { defineRoute } from '../http/routes';
import { jsonBody, parseOrThrow } from '../http/validate';
import type { UsageStore } from '../gateway/store';

const usd = z.number().finite().nonnegative().max(1e9);

const accountName = z.string().trim().min(1).max(200);
const webhookScheme = z.enum(WEBHOOK_SCHEMES, { error: 'must be one of genway, standard' });

const createAccountBody = z.strictObject({
  name: accountName,
  balanceUsd: usd.optional(),
  webhookScheme: webhookScheme.optional(),
});

const updateAccountBody = z
  .strictObject({ name: accountName.optional(), webhookScheme: webhookScheme.optional() })
  .refine((body) => Object.keys(body).length > 0, { error: 'must set at least one of name, webhookScheme' });

const creditBody = z.strictObject({
  amountUsd: usd.positive(),
  /** Makes the credit idempotent: a retried credit with the same reference is applied once. */
  reference: z.string().min(1).max(200).optional(),
});

const createKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  models: z.array(z.string().min(1).max(200)).max(1000).optional(),
  rateLimit: rateLimitSchema.optional(),
});

function requireAdminToken(token: string): RequestHandler {
  return (req, _res, next) => {
    const presented = bearerToken(req.headers.authorization);
    if (presented === undefined || !secretsEqual(presented, token)) {
      throw new ApiError(
        'unauthorized',
        'Missing or invalid admin token: send Authorization: Bearer <admin.token>',
        {
          'WWW-Authenticate': 'Bearer',
        },
      );
    }
    next();
  };
}

export interface AdminDeps {
  accounts: AccountsService;
  usage: Pick<UsageStore, 'get'>;
  token: string;
  bodyLimitBytes: number;
}

/** Mounted under /admin/v1 only when admin.token is configured; otherwise every admin path is a 404. */
export function adminRouter({ accounts, usage, token, bodyLimitBytes }: AdminDeps): Router {
  const router = express.Router();
  const json = jsonBody(bodyLimitBytes);
  router.use(requireAdminToken(token));

  defineRoute(router, '/accounts', {
    post: [
      ...json,
      async (req, res) => {
        const body = parseOrThrow(createAccountBody, req.body, 'body');
        const { name, balanceUsd, ...settings } = body;
        res.json(ok(await accounts.createAccount(name, balanceUsd, settings)));
      },
    ],
  });
  defineRoute(router, '/accounts/:accountId', {
    get: async (req, res) => {
      res.json(ok(await accounts.describeAccount(req.params.accountId as string)));
    },
    patch: [
      ...json,
      async (req, res) => {
        const body = parseOrThrow(updateAccountBody, req.body, 'body');
        res.json(ok(await accounts.updateAccount(req.params.accountId as string, body)));
      },
    ],
  });
  defineRoute(router, '/accounts/:accountId/credits', {
    post: [
      ...json,
      async (req, res) => {
        const body = parseOrThrow(creditBody, req.body, 'body');
        res.json(ok(await accounts.credit(req.params.accountId as string, body.amountUsd, body.reference)));
      },
    ],
  });
  defineRoute(router, '/accounts/:accountId/keys', {
    post: [
      ...json,
      async (req, res) => {
        const body = parseOrThrow(createKeyBody, req.body ?? {}, 'body');
        res.json(ok(await accounts.createKey(req.params.accountId as string, body)));
      },
    ],
  });
  defineRoute(router, '/keys/:keyId', {
    delete: async (req, res) => {
      res.json(ok(await accounts.revokeKey(req.params.keyId as string)));
    },
  });
  defineRoute(router, '/keys/:keyId/usage', {
    get: async (req, res) => {
      const keyId = req.params.keyId as string;
      await accounts.requireKey(keyId);
      res.json(ok({ keyId, models: await usage.get(keyId) }));
    },
  });
  return router;
}
