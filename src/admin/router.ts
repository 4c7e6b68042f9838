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
import { auditedKey, rotationChanges, type AuditTrail } from '../logs';
import type { AuditChange } from '../logs/audit';

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
  /** Where every change made here is recorded (src/logs); absent = not recorded. */
  audit?: AuditTrail;
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
  audit,
}: AdminDeps): Router {
  const router = express.Router();
  const json = jsonBody(bodyLimitBytes);
  router.use(requireAdminToken(token));
  for (const routes of also) router.use(routes);
  /** One audit row for a change made by the admin token (never the token itself). */
  const audited = (req: express.Request, res: express.Response, change: AuditChange) =>
    audit?.record(audit.context(req, res.locals.requestId), change);

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
        const before = await budgets.get(accountId, scope);
        if (body.webhookUrl !== undefined)
          await accounts.updateAccount(accountId, { budgetWebhookUrl: body.webhookUrl });
        const after = await budgets.set(accountId, scope, body);
        audited(req, res, {
          action: 'budget.set',
          target: `budget:${scope === 'account' ? `account:${accountId}` : scope}`,
          accountId,
          before: before && { ...before },
          after: { ...after, ...(body.webhookUrl !== undefined ? { webhookUrl: body.webhookUrl } : {}) },
        });
        res.json(ok(after));
      },
    ],
    delete: async (req: express.Request, res: express.Response) => {
      const { accountId, scope } = await resolve(req.params.id as string);
      const before = await budgets.get(accountId, scope);
      await budgets.remove(accountId, scope);
      if (before)
        audited(req, res, {
          action: 'budget.delete',
          target: `budget:${scope === 'account' ? `account:${accountId}` : scope}`,
          accountId,
          before: { ...before },
          after: null,
        });
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
        const created = await accounts.createAccount(name, balanceUsd, settings);
        audited(req, res, {
          action: 'account.create',
          target: `account:${created.accountId}`,
          accountId: created.accountId,
          after: { name, balanceUsd: balanceUsd ?? 0, webhookScheme: settings.webhookScheme ?? 'genway' },
        });
        res.json(ok(created));
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
        const accountId = req.params.accountId as string;
        const before: Record<string, unknown> = await accounts.describeAccount(accountId);
        const after: Record<string, unknown> = await accounts.updateAccount(accountId, body);
        const changed = Object.keys(body);
        const pick = (view: Record<string, unknown>) =>
          Object.fromEntries(changed.map((k) => [k, view[k] ?? null]));
        audited(req, res, {
          action: 'account.update',
          target: `account:${accountId}`,
          accountId,
          before: pick(before),
          after: pick(after),
        });
        res.json(ok(after));
      },
    ],
  });
  defineRoute(router, '/accounts/:accountId/credits', {
    post: [
      ...json,
      async (req, res) => {
        const body = parseOrThrow(creditBody, req.body, 'body');
        const accountId = req.params.accountId as string;
        const credited = await accounts.credit(accountId, body.amountUsd, body.reference);
        audited(req, res, {
          action: 'credit.add',
          target: `account:${accountId}`,
          accountId,
          after: {
            amountUsd: body.amountUsd,
            reference: body.reference ?? null,
            balanceUsd: credited.balanceUsd,
          },
        });
        res.json(ok(credited));
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
        const accountId = req.params.accountId as string;
        const created = await accounts.createKey(accountId, body);
        audited(req, res, {
          action: 'key.create',
          target: `key:${created.keyId}`,
          accountId,
          after: auditedKey(await accounts.describeKey(created.keyId)),
        });
        res.json(ok(created));
      },
    ],
  });
  defineRoute(router, '/keys/:keyId', {
    get: async (req, res) => {
      res.json(ok(await accounts.describeKey(req.params.keyId as string)));
    },
    delete: async (req, res) => {
      const keyId = req.params.keyId as string;
      const before = await accounts.describeKey(keyId);
      const revoked = await accounts.revokeKey(keyId);
      audited(req, res, {
        action: 'key.revoke',
        target: `key:${keyId}`,
        accountId: before.accountId,
        before: { status: before.status, prefix: before.prefix },
        after: { status: 'revoked', prefix: before.prefix },
      });
      res.json(ok(revoked));
    },
  });
  defineRoute(router, '/keys/:keyId/rotate', {
    post: [
      ...json,
      async (req, res) => {
        const body = parseOrThrow(rotateKeyBody, req.body ?? {}, 'body');
        const keyId = req.params.keyId as string;
        const before = await accounts.describeKey(keyId);
        const rotated = await accounts.rotateKey(keyId, body.graceSeconds, body.expiresAt);
        if (audit) for (const change of rotationChanges(before, rotated)) audited(req, res, change);
        res.json(ok(rotated));
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
