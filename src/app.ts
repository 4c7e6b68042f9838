import type { IncomingMessage, RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';
import express from 'express';
import { balanceRouter } from './accounts/router';
import { adminRouter } from './admin/router';
import { batchesRouter } from './batches/router';
import { modelsRouter } from './catalog/router';
import { filesRouter } from './files/router';
import { tasksRouter } from './tasks/router';
import { webhooksRouter } from './webhooks/router';
import { requireApiKey } from './http/auth';
import { errorHandler, unknownRoute } from './http/errors';
import { consoleRouter } from './http/console';
import { healthRouter } from './http/health';
import { statsRouter } from './http/stats';
import { requestContext } from './http/request-context';
import { closingWriteHead } from './http/server';
import './http/locals';
import { publicHttpsUrlProblem } from './outbound/addresses';
import type { Services } from './services';
import { accountLogsRouter, adminLogsRouter } from './logs/router';

/** The request handler, and what answers an HTTP upgrade (the gateway's WebSocket routes). */
export type App = RequestListener & {
  upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
};

/** Builds the HTTP request handler from ready-made services; never listens (supertest drives it directly). */
export function buildApp(services: Services): App {
  const { config, accounts, store, metrics, logger } = services;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.server.trustProxy);
  // Express gives every response its own prototype: refusals sent before the body arrived close early here too.
  app.response.writeHead = closingWriteHead as typeof app.response.writeHead;

  app.use(requestContext(logger, metrics));
  app.use(healthRouter(services));
  if (config.console.enabled) app.use(consoleRouter(config.console.dir, () => services.signer.origin));
  app.use(filesRouter({ signer: services.signer, tasks: store.tasks, clock: services.clock }));

  if (config.admin.token) {
    app.use(
      '/admin/v1',
      adminRouter({
        accounts,
        usage: {
          // This replica's pending sums first, so its own calls are always counted.
          get: async (keyId) => {
            await services.gateway.flushUsage();
            return store.usage.get(keyId);
          },
        },
        reports: services.usageReports,
        budgets: services.budgets,
        urlProblem: (url) => publicHttpsUrlProblem(url, config.security.allowPrivateTargets),
        token: config.admin.token,
        bodyLimitBytes: config.server.bodyLimitBytes,
        audit: services.logs.audit,
        also: [
          statsRouter(services.recentStats),
          adminLogsRouter({ logs: services.logs, accounts, bodyLimitBytes: config.server.bodyLimitBytes }),
        ],
      }),
    );
  }

  const api = express.Router();
  api.use(
    // Refused before a route matched (401, 429): still one label per surface, not per URL.
    (_req, res, next) => {
      res.locals.route = '/api/v1/*';
      next();
    },
    requireApiKey(
      {
        accounts,
        keyGate: store.keyGate,
        defaultLimit: config.rateLimits.default,
        onRateLimited: () => metrics.rateLimitRejections.inc({ surface: 'task_api' }),
      },
      config.admin.token,
    ),
  );
  // Single tasks first: the busiest routes are matched before the rest are tried (no paths overlap).
  api.use(
    tasksRouter({
      tasks: services.tasks,
      bodyLimitBytes: config.server.bodyLimitBytes,
      tracing: services.tracing,
      requestLog: config.logs.enabled ? services.logs.requestLog : undefined,
    }),
  );
  api.use(
    balanceRouter({ ...services, bodyLimitBytes: config.server.bodyLimitBytes, audit: services.logs.audit }),
  );
  api.use(statsRouter(services.recentStats));
  api.use(modelsRouter(services));
  api.use(
    batchesRouter({
      batches: services.batches,
      maxBodyBytes: config.batches.maxBodyBytes,
      requestLog: config.logs.enabled ? services.logs.requestLog : undefined,
    }),
  );
  api.use(
    webhooksRouter({
      secrets: services.webhookSecrets,
      deliveries: services.deliveries,
      audit: services.logs.audit,
    }),
  );
  api.use(accountLogsRouter({ logs: services.logs }));
  app.use('/api/v1', api);

  app.use(unknownRoute);
  app.use(errorHandler(logger));

  // The LLM gateway (/v1, /v1beta) answers ahead of Express: no body parser, no per-request Express
  // decoration, vendor-shaped errors, the same access line and request metrics (src/gateway/router.ts).
  const { gateway } = services;
  const handler: RequestListener = (req, res) =>
    gateway.owns(req.url!) ? gateway.handle(req, res) : app(req, res);
  return Object.assign(handler, {
    upgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      if (gateway.owns(req.url!)) return gateway.upgrade(req, socket, head);
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    },
  });
}
