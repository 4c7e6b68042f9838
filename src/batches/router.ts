import express, { type RequestHandler, type Router } from 'express';
import { ApiError, ok } from '../errors';
import { defineRoute } from '../http/routes';
import { jsonBody } from '../http/validate';
import type { BatchService } from './service';

/** The header is checked before the body is read: a request without it costs no upload. */
const requireIdempotencyKey: RequestHandler = (req, _res, next) => {
  if (!req.get('idempotency-key')?.trim())
    throw new ApiError('invalid_request', 'Idempotency-Key header is required');
  next();
};

/** Batch endpoints of the task API (inside /api/v1, after authentication and rate limiting). */
export function batchesRouter({
  batches,
  maxBodyBytes,
}: {
  batches: BatchService;
  maxBodyBytes: number;
}): Router {
  const router = express.Router();
  defineRoute(router, '/generateTask/:model/batches', {
    post: [
      requireIdempotencyKey,
      ...jsonBody(maxBodyBytes),
      async (req, res) => {
        const view = await batches.submit(
          res.locals.auth!,
          req.params.model as string,
          req.get('idempotency-key'),
          req.body,
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
  return router;
}
