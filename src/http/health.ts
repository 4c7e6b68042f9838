import express, { type Router } from 'express';
import { ok } from '../errors';
import type { Metrics } from '../observability/metrics';
import { defineRoute } from './routes';

const READY_TIMEOUT_MS = 2000;

/** /healthz: the process is up. /readyz: the store answers. /metrics: Prometheus text format. */
export function healthRouter({
  store,
  metrics,
}: {
  store: { readonly kind: string; ping(): Promise<void> };
  metrics: Metrics;
}): Router {
  const router = express.Router();
  defineRoute(router, '/healthz', { get: (_req, res) => void res.json(ok({ status: 'ok' })) });
  defineRoute(router, '/readyz', {
    get: async (_req, res) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
      });
      try {
        await Promise.race([store.ping(), timeout]);
        res.json(ok({ status: 'ready', store: store.kind }));
      } catch {
        res.status(503).json({ code: 503, message: `Store (${store.kind}) does not answer`, data: null });
      } finally {
        clearTimeout(timer);
      }
    },
  });
  defineRoute(router, '/metrics', {
    get: async (_req, res) => {
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    },
  });
  // GET /: where things are, for someone who opens the base URL (the service has no page of its own yet).
  defineRoute(router, '/', {
    get: (_req, res) =>
      void res.json(
        ok({
          service: 'genway',
          health: '/healthz',
          ready: '/readyz',
          metrics: '/metrics',
          models: '/api/v1/models',
          taskApi: '/api/v1',
          console: '/console/',
          gateway: ['/v1', '/v1beta', '/anthropic', '/openai', '/gemini'],
          docs: 'README.md and docs/ in the Genway source',
        }),
      ),
  });
  return router;
}
