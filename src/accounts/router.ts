import express, { type Router } from 'express';
import { ok } from '../errors';
import { defineRoute } from '../http/routes';
import type { Budgets } from './budgets';
import type { AccountsService } from './service';
import { usageCsv, type UsageReports } from './usage-report';

/** Account endpoints of the task API (mounted after authentication and rate limiting): the caller's own account. */
export function balanceRouter({
  accounts,
  usageReports,
  budgets,
}: {
  accounts: AccountsService;
  usageReports: UsageReports;
  budgets: Budgets;
}): Router {
  const router = express.Router();
  defineRoute(router, '/apikeys/current-balance', {
    get: async (_req, res) => {
      res.json(ok(await accounts.balanceUsd(res.locals.auth!.accountId)));
    },
  });
  defineRoute(router, '/usage', {
    get: async (req, res) => {
      const query = usageReports.parse(req.query);
      const report = await usageReports.report(res.locals.auth!.accountId, query);
      if (query.format === 'csv') res.type('text/csv').send(usageCsv(report));
      else res.json(ok(report));
    },
  });
  defineRoute(router, '/budgets', {
    get: async (_req, res) => {
      const { accountId, keyId } = res.locals.auth!;
      res.json(ok({ budgets: await budgets.views(accountId, keyId) }));
    },
  });
  defineRoute(router, '/keys', {
    get: async (_req, res) => {
      res.json(ok({ keys: await accounts.listKeys(res.locals.auth!.accountId) }));
    },
  });
  return router;
}
