import type { IncomingMessage } from 'node:http';
import { uuidV7 } from '../ids';
import type { RequestHandler } from 'express';
import type { Logger } from '../observability/logger';
import { loggableUrl } from '../observability/logger';
import type { Metrics } from '../observability/metrics';

const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * A sane incoming X-Request-Id (so a trace spans systems), otherwise a new one: a UUID of version 7, whose first
 * digits are its time, so the request log's index of ids grows at its end as rows arrive (src/ids.ts).
 */
export function requestIdOf(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && CLIENT_REQUEST_ID.test(incoming) ? incoming : uuidV7();
}

const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Every Express request: its id (echoed in X-Request-Id), and once the response is over its request metrics and
 * one access line (info level; not for health and metrics probes). One listener per request, and no per-request
 * child logger: the line is only built when info is enabled.
 */
export function requestContext(logger: Logger, metrics: Metrics): RequestHandler {
  const observeRequest = requestObserver(metrics);
  return (req, res, next) => {
    const start = performance.now();
    const requestId = requestIdOf(req);
    res.locals.requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    const quiet = QUIET_PATHS.has(req.path);
    res.once('close', () => {
      const route = res.locals.route ?? 'unmatched';
      observeRequest(route, req.method, res.statusCode, start);
      if (quiet) return;
      const fields = {
        requestId,
        method: req.method,
        url: req.originalUrl,
        status: res.statusCode,
        start,
        route,
      };
      logRequest(logger, fields, res.writableFinished);
    });
    next();
  };
}

export type RequestObserver = (route: string, method: string, status: number, start: number) => void;

/**
 * The request counter and duration histogram of finished requests, their label sets bound once per route, method
 * and status (route templates and the methods Node parses are bounded sets).
 */
export function requestObserver(metrics: Metrics): RequestObserver {
  type Bound = { requests: { inc(): void }; duration: { observe(v: number): void } };
  const byRoute = new Map<string, Map<string, Map<number, Bound>>>();
  return (route, method, status, start) => {
    let byMethod = byRoute.get(route);
    if (!byMethod) byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let bound = byStatus.get(status);
    if (!bound) {
      const labels = { route, method, status: String(status) };
      bound = { requests: metrics.httpRequests.child(labels), duration: metrics.httpDuration.child(labels) };
      byStatus.set(status, bound);
    }
    bound.requests.inc();
    bound.duration.observe((performance.now() - start) / 1000);
  };
}

/** One access line: id, method, redacted URL, status, time and route; never headers or bodies. */
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
