import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import { secretsEqual } from '../accounts/api-keys';
import type { AccountsService } from '../accounts/service';
import { WEBHOOK_SCHEMES } from '../accounts/store';
import { ApiError, ok } from '../errors';
import { bearerToken } from '../http/auth';
import { defineRoute } from '../http/routes';
import { jsonBody, parseOrThrow } from '../http/validate';
import type { UsageStore } from '../gateway/store';
import { BUDGET_PERIODS, accountScope, keyScope } from '../accounts/usage';
import type { Budgets } from '../accounts/budgets';
import { usageCsv, type UsageReports } from '../accounts/usage-report';
import { createKeyBody, isoTime, rotateKeyBody } from '../accounts/key-schemas';

const usd = z.number().finite().nonnegative().max(1e9);

const accountName = z.string().trim().min(1).max(200);
const webhookScheme = z.enum(WEBHOOK_SCHEMES, { error: 'must be one of genway, standard' });

const createAccountBody = z.strictObject({
  name: accountName,
  balanceUsd: usd.optional(),
  webhookScheme: webhookScheme.optional(),
});

/** Where budget events go; null removes it (then the configured default, if any). */
const budgetWebhookUrl = z.string().min(1).max(2048).nullable();

const updateAccountBody = z
  .strictObject({
    name: accountName.optional(),
    webhookScheme: webhookScheme.optional(),
    budgetWebhookUrl: budgetWebhookUrl.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, {
    error: 'must set at least one of name, webhookScheme, budgetWebhookUrl',
  });

const creditBody = z.strictObject({
  amountUsd: usd.positive(),
  /** Makes the credit idempotent: a retried credit with the same reference is applied once. */
  reference: z.string().min(1).max(200).optional(),
});

const budgetBody = z.strictObject({
  period: z.enum(BUDGET_PERIODS, { error: 'must be one of day, month, window' }),
  limitUsd: usd,
  /** A window's bounds (period `window` only). */
  startsAt: isoTime.optional(),
  endsAt: isoTime.optional(),
  softPercent: z.number().gt(0).lt(100).optional(),
  webhookUrl: budgetWebhookUrl.optional(),
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
  reports: UsageReports;
  budgets: Budgets;
  /** Why a webhook URL is refused (the callback rules), or null. */
  urlProblem: (url: string) => string | null;
  token: string;
  bodyLimitBytes: number;
  /** Extra routes behind the admin token (GET /stats). */
  also?: Router[];
}

/** Mounted under /admin/v1 only when admin.token is configured; otherwise every admin path is a 404. */
export function adminRouter({
  accounts,
  usage,
  reports,
  budgets,
  urlProblem,
  token,
  bodyLimitBytes,
  also = [],
}: AdminDeps): Router {
  const router = express.Router();
  const json = jsonBody(bodyLimitBytes);
  router.use(requireAdminToken(token));
  for (const routes of also) router.use(routes);

  const checkUrl = (url: string | null | undefined, field: string) => {
    const problem = url ? urlProblem(url) : null;
    if (problem) throw new ApiError('invalid_request', `body.${field}: ${problem}`);
  };

  /** PUT, GET and DELETE of one budget (an account's, or a key's within its account). */
  const budgetRoutes = (resolve: (id: string) => Promise<{ accountId: string; scope: string }>) => ({
    get: async (req: express.Request, res: express.Response) => {
      const { accountId, scope } = await resolve(req.params.id as string);
      const budget = await budgets.get(accountId, scope);
      if (!budget) throw new ApiError('not_found', 'No budget is set here');
      res.json(ok(budget));
    },
    put: [
      ...json,
      async (req: express.Request, res: express.Response) => {
        const body = parseOrThrow(budgetBody, req.body, 'body');
        checkUrl(body.webhookUrl, 'webhookUrl');
        const { accountId, scope } = await resolve(req.params.id as string);
        if (body.webhookUrl !== undefined)
          await accounts.updateAccount(accountId, { budgetWebhookUrl: body.webhookUrl });
        res.json(ok(await budgets.set(accountId, scope, body)));
      },
    ],
    delete: async (req: express.Request, res: express.Response) => {
      const { accountId, scope } = await resolve(req.params.id as string);
      await budgets.remove(accountId, scope);
      res.json(ok({ deleted: true }));
    },
  });

  defineRoute(router, '/accounts', {
    get: async (_req, res) => {
      res.json(ok({ accounts: await accounts.listAccounts() }));
    },
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
        checkUrl(body.budgetWebhookUrl, 'budgetWebhookUrl');
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
  defineRoute(
    router,
    '/accounts/:id/budget',
    budgetRoutes(async (accountId) => {
      await accounts.describeAccount(accountId); // 404 for an unknown account
      return { accountId, scope: accountScope };
    }),
  );
  defineRoute(router, '/accounts/:accountId/budgets', {
    get: async (req, res) => {
      const accountId = req.params.accountId as string;
      await accounts.describeAccount(accountId);
      res.json(ok({ budgets: await budgets.views(accountId) }));
    },
  });
  defineRoute(router, '/accounts/:accountId/keys', {
    get: async (req, res) => {
      res.json(ok({ keys: await accounts.listKeys(req.params.accountId as string) }));
    },
    post: [
      ...json,
      async (req, res) => {
        const body = parseOrThrow(createKeyBody, req.body ?? {}, 'body');
        res.json(ok(await accounts.createKey(req.params.accountId as string, body)));
      },
    ],
  });
  defineRoute(router, '/keys/:keyId', {
    get: async (req, res) => {
      res.json(ok(await accounts.describeKey(req.params.keyId as string)));
    },
    delete: async (req, res) => {
      res.json(ok(await accounts.revokeKey(req.params.keyId as string)));
    },
  });
  defineRoute(router, '/keys/:keyId/rotate', {
    post: [
      ...json,
      async (req, res) => {
        const body = parseOrThrow(rotateKeyBody, req.body ?? {}, 'body');
        res.json(ok(await accounts.rotateKey(req.params.keyId as string, body.graceSeconds, body.expiresAt)));
      },
    ],
  });
  defineRoute(
    router,
    '/keys/:id/budget',
    budgetRoutes(async (keyId) => {
      const key = await accounts.requireKey(keyId);
      return { accountId: key.accountId, scope: keyScope(keyId) };
    }),
  );
  defineRoute(router, '/usage', {
    get: async (req, res) => {
      const query = reports.parse(req.query, true);
      if (query.accountId) await accounts.describeAccount(query.accountId);
      const report = await reports.report(query.accountId ?? null, query);
      if (query.format === 'csv') res.type('text/csv').send(usageCsv(report));
      else res.json(ok(report));
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
