import type { RequestHandler, Router } from 'express';
import { ApiError } from '../errors';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Handlers = RequestHandler | RequestHandler[];

/** Remembers the route template for metrics and logs; runs before the method handlers. */
const tagRoute: RequestHandler = (req, res, next) => {
  res.locals.route = req.baseUrl + (req.route?.path ?? '');
  next();
};

/**
 * Declares one path with its method handlers. Any other method on the path is a 405 naming the allowed
 * ones (with an Allow header), so an unknown method is never mistaken for an unknown route.
 */
export function defineRoute(router: Router, path: string, handlers: Partial<Record<Method, Handlers>>): void {
  const route = router.route(path);
  route.all(tagRoute);
  const allowed: string[] = [];
  for (const [method, handler] of Object.entries(handlers) as [Method, Handlers][]) {
    route[method](...[handler].flat());
    allowed.push(method.toUpperCase());
    if (method === 'get') allowed.push('HEAD');
  }
  const allow = allowed.join(', ');
  route.all((req) => {
    throw new ApiError('method_not_allowed', `Method ${req.method} is not allowed here; allowed: ${allow}`, {
      Allow: allow,
    });
  });
}
