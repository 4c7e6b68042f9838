import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import pinoHttp from 'pino-http';
import type { Logger } from '../observability/logger';
import { loggableUrl } from '../observability/logger';
import type { Metrics } from '../observability/metrics';

const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** A sane incoming X-Request-Id (so a trace spans systems), otherwise a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && CLIENT_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** Gives every request its id and echoes it back. */
export const requestId: RequestHandler = (req, res, next) => {
  const id = requestIdOf(req);
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

/** The request counter and duration histogram of one finished request. */
export function observeRequest(
  metrics: Metrics,
  route: string,
  method: string,
  status: number,
  start: number,
): void {
  const labels = { route, method, status: String(status) };
  metrics.httpRequests.inc(labels);
  metrics.httpDuration.observe(labels, (performance.now() - start) / 1000);
}

/** Request counter and duration histogram by route template, method and status code. */
export function requestMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const start = performance.now();
    res.once('close', () =>
      observeRequest(metrics, res.locals.route ?? 'unmatched', req.method, res.statusCode, start),
    );
    next();
  };
}

/** The access line of accessLog, written directly (for the gateway, which runs ahead of Express). */
export function logRequest(
  logger: Logger,
  fields: { requestId: string; method: string; url: string; status: number; start: number; route: string },
  finished: boolean,
): void {
  if (!logger.isLevelEnabled('info')) return;
  logger.info(
    {
      req: { id: fields.requestId, method: fields.method, url: loggableUrl(fields.url) },
      res: { statusCode: fields.status },
      responseTime: Math.round(performance.now() - fields.start),
      route: fields.route,
    },
    finished ? 'request completed' : 'request aborted',
  );
}
