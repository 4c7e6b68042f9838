import express, { type Router } from 'express';
import { ok } from '../errors';
import type { RecentStats } from '../observability/recent-stats';
import { defineRoute } from './routes';

/**
 * GET /stats (under /api/v1 and /admin/v1): the service's error rate and latency of the last hour, per surface.
 * The same for every caller: it describes the service an account uses, and names no account.
 */
export function statsRouter(stats: RecentStats): Router {
  const router = express.Router();
  defineRoute(router, '/stats', {
    get: async (_req, res) => {
      res.json(ok(await stats.report()));
    },
  });
  return router;
}
