import express, { type Router } from 'express';
import { ok } from '../errors';
import { defineRoute } from '../http/routes';
import type { DeliveryEngine } from './deliveries';
import type { WebhookSecrets } from './secrets';
import type { AuditTrail } from '../logs';

/** The account's webhook signing secret (inside /api/v1: any key of the account sees the same secret). */
export function webhooksRouter({
  secrets,
  deliveries,
  audit,
}: {
  secrets: WebhookSecrets;
  deliveries: DeliveryEngine;
  /** Rotations and revocations are recorded there by version, never the secret (src/logs). */
  audit?: AuditTrail;
}): Router {
  const router = express.Router();
  const audited = (
    req: express.Request,
    res: express.Response,
    action: string,
    before: object,
    after: object,
  ) => {
    const { accountId, keyId } = res.locals.auth!;
    audit?.record(audit.context(req, res.locals.requestId, keyId), {
      action,
      target: `webhook_secret:${accountId}`,
      accountId,
      before: { ...before },
      after: { ...after },
    });
  };
  defineRoute(router, '/webhooks/secret', {
    get: async (_req, res) => void res.json(ok(await secrets.show(res.locals.auth!.accountId))),
  });
  defineRoute(router, '/webhooks/secret/rotate', {
    post: async (req, res) => {
      const rotated = await secrets.rotate(res.locals.auth!.accountId);
      audited(
        req,
        res,
        'webhook_secret.rotate',
        { version: rotated.version - 1 },
        { version: rotated.version },
      );
      res.json(ok(rotated));
    },
  });
  defineRoute(router, '/webhooks/secret/revoke', {
    post: async (req, res) => {
      const revoked = await secrets.revoke(res.locals.auth!.accountId);
      audited(req, res, 'webhook_secret.revoke', { version: revoked.version }, revoked);
      res.json(ok(revoked));
    },
  });
  defineRoute(router, '/webhooks/deliveries', {
    get: async (req, res) => void res.json(ok(await deliveries.list(res.locals.auth!.accountId, req.query))),
  });
  defineRoute(router, '/webhooks/deliveries/:deliveryId/redeliver', {
    post: async (req, res) =>
      void res.json(
        ok(await deliveries.redeliver(res.locals.auth!.accountId, req.params.deliveryId as string)),
      ),
  });
  return router;
}
