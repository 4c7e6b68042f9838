import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import pinoHttp from 'pino-http';
import type { Logger } from '../observability/logger';
import { loggableUrl } from '../observability/logger';
import type { Metrics } from '../observability/metrics';

const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Honours a sane incoming X-Request-Id (so a trace spans systems), otherwise makes one; echoes it back. */
export const requestId: RequestHandler = (req, res, next) => {
  const incoming = req.headers['x-request-id'];
  const id = typeof incoming === 'string' && CLIENT_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-Id', id);
  next();
};

const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** One JSON line per request. Only id, method, redacted URL and status: never headers or bodies. */
export function accessLog(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId: (_req, res) => (res as unknown as { locals: Express.Locals }).locals.requestId,
    autoLogging: { ignore: (req) => QUIET_PATHS.has(req.url ?? '') },
    wrapSerializers: false,
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({
        id: req.id,
        method: req.method,
        url: loggableUrl(req.url),
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    customProps: (_req, res) => ({ route: (res as unknown as { locals: Express.Locals }).locals.route }),
  });
}

function observe(metrics: Metrics, req: Request, res: Response, start: number): void {
  const labels = {
    route: res.locals.route ?? 'unmatched',
    method: req.method,
    status: String(res.statusCode),
  };
  metrics.httpRequests.inc(labels);
  metrics.httpDuration.observe(labels, (performance.now() - start) / 1000);
}

/** Request counter and duration histogram by route template, method and status code. */
export function requestMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const start = performance.now();
    res.once('close', () => observe(metrics, req, res, start));
    next();
  };
}

/**
 * accessLog + requestMetrics for a hot path, in one 'close' listener: the same access line (when info is
 * enabled) without pino-http's per-request child logger, and the same metric series.
 */
export function observeLean(logger: Logger, metrics: Metrics) {
  return (req: Request, res: Response, start: number): void => {
    res.once('close', () => {
      observe(metrics, req, res, start);
      if (!logger.isLevelEnabled('info')) return;
      logger.info(
        {
          req: { id: res.locals.requestId, method: req.method, url: loggableUrl(req.originalUrl) },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(performance.now() - start),
          route: res.locals.route,
        },
        res.writableFinished ? 'request completed' : 'request aborted',
      );
    });
  };
}
