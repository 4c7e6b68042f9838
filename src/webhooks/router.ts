import express, { type Router } from 'express';
import { ok } from '../errors';
import { defineRoute } from '../http/routes';
import type { DeliveryEngine } from './deliveries';
import type { WebhookSecrets } from './secrets';

/** The account's webhook signing secret (inside /api/v1: any key of the account sees the same secret). */
export function webhooksRouter({
  secrets,
  deliveries,
}: {
  secrets: WebhookSecrets;
  deliveries: DeliveryEngine;
}): Router {
  const router = express.Router();
  defineRoute(router, '/webhooks/secret', {
    get: async (_req, res) => void res.json(ok(await secrets.show(res.locals.auth!.accountId))),
  });
  defineRoute(router, '/webhooks/secret/rotate', {
    post: async (_req, res) => void res.json(ok(await secrets.rotate(res.locals.auth!.accountId))),
  });
  defineRoute(router, '/webhooks/secret/revoke', {
    post: async (_req, res) => void res.json(ok(await secrets.revoke(res.locals.auth!.accountId))),
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
