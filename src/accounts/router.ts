import express, { type Router } from 'express';
import { ApiError, ok } from '../errors';
import { defineRoute } from '../http/routes';
import { jsonBody, parseOrThrow } from '../http/validate';
import type { Budgets } from './budgets';
import { rotateKeyBody, selfServiceKeyBody } from './key-schemas';
import type { AccountsService, AuthContext } from './service';
import { usageCsv, type UsageReports } from './usage-report';
import { auditedKey, rotationChanges, type AuditTrail } from '../logs';
import type { AuditChange } from '../logs/audit';

/** Account endpoints of the task API (mounted after authentication and rate limiting): the caller's own account. */
export function balanceRouter({
  accounts,
  usageReports,
  budgets,
  bodyLimitBytes,
  audit,
}: {
  accounts: AccountsService;
  usageReports: UsageReports;
  budgets: Budgets;
  bodyLimitBytes: number;
  /** Where key changes made here are recorded, with the key that made them as the actor (src/logs). */
  audit?: AuditTrail;
}): Router {
  const router = express.Router();
  const audited = (req: express.Request, res: express.Response, change: AuditChange) =>
    audit?.record(audit.context(req, res.locals.requestId, res.locals.auth!.keyId), change);
  const json = jsonBody(bodyLimitBytes);
  defineRoute(router, '/account', {
    get: async (_req, res) => {
      const { accountId, keyId } = res.locals.auth!;
      const { name, balanceUsd, webhookScheme, createdAt } = await accounts.describeAccount(accountId);
      res.json(ok({ accountId, name, keyId, balanceUsd, webhookScheme, createdAt }));
    },
  });
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
    post: [
      ...json,
      async (req, res) => {
        const auth = mayManageKeys(res.locals.auth!);
        if (req.body && typeof req.body === 'object' && 'rateLimit' in req.body)
          throw new ApiError('forbidden', "body.rateLimit: a key's rate limit is set by the admin API only");
        const body = parseOrThrow(selfServiceKeyBody, req.body ?? {}, 'body');
        const created = await accounts.createKey(auth.accountId, body);
        const view = await accounts.describeKey(created.keyId);
        audited(req, res, {
          action: 'key.create',
          target: `key:${created.keyId}`,
          accountId: auth.accountId,
          after: auditedKey(view),
        });
        res.json(ok({ ...view, key: created.key }));
      },
    ],
  });
  defineRoute(router, '/keys/:keyId', {
    get: async (req, res) => {
      res.json(ok(await ownKey(accounts, res.locals.auth!, req.params.keyId as string)));
    },
    delete: async (req, res) => {
      const auth = mayManageKeys(res.locals.auth!);
      const key = await ownKey(accounts, auth, req.params.keyId as string);
      const revoked = await accounts.revokeKey(key.keyId);
      audited(req, res, {
        action: 'key.revoke',
        target: `key:${key.keyId}`,
        accountId: auth.accountId,
        before: { status: key.status, prefix: key.prefix },
        after: { status: 'revoked', prefix: key.prefix },
      });
      res.json(ok(revoked));
    },
  });
  defineRoute(router, '/keys/:keyId/rotate', {
    post: [
      ...json,
      async (req, res) => {
        const auth = mayManageKeys(res.locals.auth!);
        const body = parseOrThrow(rotateKeyBody, req.body ?? {}, 'body');
        const key = await ownKey(accounts, auth, req.params.keyId as string);
        const rotated = await accounts.rotateKey(key.keyId, body.graceSeconds, body.expiresAt);
        for (const change of rotationChanges(key, rotated)) audited(req, res, change);
        res.json(ok(rotated));
      },
    ],
  });
  return router;
}

/**
 * Who may create, rotate and revoke an account's keys through the task API: a key without a model allow-list
 * (a restricted key must not mint itself an unrestricted one), or the admin acting for the account.
 */
function mayManageKeys(auth: AuthContext): AuthContext {
  if (auth.models !== null)
    throw new ApiError(
      'forbidden',
      'This key has a model allow-list: managing keys needs a key without one, or the admin API',
    );
  return auth;
}

/** One of the caller's account's keys; another account's key is a 404, as if it did not exist. */
async function ownKey(accounts: AccountsService, auth: AuthContext, keyId: string) {
  // describeKey's own 404 passes as is; any other failure (the store) is not turned into one.
  const key = await accounts.describeKey(keyId);
  if (key.accountId !== auth.accountId) throw new ApiError('not_found', `No key with keyId ${keyId}`);
  return key;
}
