import express, { type Router } from 'express';
import { ok } from '../errors';
import { defineRoute } from '../http/routes';
import type { AccountsService } from './service';

/** Account endpoints of the task API (mounted after authentication and rate limiting). */
export function balanceRouter({ accounts }: { accounts: AccountsService }): Router {
  const router = express.Router();
  defineRoute(router, '/apikeys/current-balance', {
    get: async (_req, res) => {
      res.json(ok(await accounts.balanceUsd(res.locals.auth!.accountId)));
    },
  });
  return router;
}
