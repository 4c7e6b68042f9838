import express, { type RequestHandler, type Router } from 'express';
import { ok } from '../errors';
import { defineRoute } from '../http/routes';
import { jsonBody } from '../http/validate';
import { keepDecimalDuration } from '../tasks/router';
import type { RequestLog } from '../logs';
import { checkIdempotencyKey, type BatchService, type ItemOutcome } from './service';

/** Each batch request's item rows (src/logs), from the first handler to the one that submits. */
const itemLogs = new WeakMap<object, (item: ItemOutcome, batchId: string) => void>();

/** The header is checked before the body is read: a request without it (or with a bad one) costs no upload. */
const requireIdempotencyKey: RequestHandler = (req, _res, next) => {
  checkIdempotencyKey(req.get('idempotency-key'));
  next();
};

/** Batch endpoints of the task API (inside /api/v1, after authentication and rate limiting). */
export function batchesRouter({
  batches,
  maxBodyBytes,
  requestLog,
}: {
  batches: BatchService;
  maxBodyBytes: number;
  /** One request-log row per batch item (src/logs). */
  requestLog?: RequestLog;
}): Router {
  const router = express.Router();
  defineRoute(router, '/generateTask/:model/batches', {
    post: [
      // The batch's rows are written when its response closes, whatever it answers (a whole-batch 400 too).
      (req, res, next) => {
        const onItem = requestLog?.batch(
          req,
          res,
          res.locals.auth!,
          req.params.model as string,
          res.locals.requestId,
          res.locals.route!,
        );
        if (onItem) itemLogs.set(res, onItem);
        next();
      },
      requireIdempotencyKey,
      ...jsonBody(maxBodyBytes),
      async (req, res) => {
        // Each item's input is checked as the single-task endpoint checks it, decimal durations included.
        const body = req.body as { items?: unknown } | null;
        const submitted =
          body && typeof body === 'object' && Array.isArray(body.items)
            ? {
                ...body,
                items: body.items.map((item: unknown, i: number) =>
                  item && typeof item === 'object' && 'input' in item
                    ? { ...item, input: keepDecimalDuration(item.input, req, ['items', i, 'input']) }
                    : item,
                ),
              }
            : body;
        const view = await batches.submit(
          res.locals.auth!,
          req.params.model as string,
          req.get('idempotency-key'),
          submitted,
          itemLogs.get(res),
        );
        res.json(ok(view));
      },
    ],
  });
  defineRoute(router, '/generateTask/:model/batches/:batchId', {
    get: async (req, res) => {
      res.json(
        ok(await batches.get(res.locals.auth!, req.params.model as string, req.params.batchId as string)),
      );
    },
  });
  defineRoute(router, '/batches', {
    get: async (req, res) => {
      res.json(ok(await batches.list(res.locals.auth!, req.query)));
    },
  });
  return router;
}
