import express, { type Router } from 'express';
import { ok } from '../errors';
import { defineRoute } from '../http/routes';
import { jsonBody, rawBodyOf } from '../http/validate';
import type { TaskService } from './service';

/**
 * `JSON.parse` turns `-1.0` into `-1`, yet the spec rejects decimal durations such as `-1.0`. When the raw body
 * wrote `input.duration` as a decimal or exponent literal, hand the model that literal text so its own rule
 * (integer or numeric string) rejects it with its own message.
 */
export function keepDecimalDuration(body: unknown, raw: Buffer | undefined): unknown {
  if (!raw || !body || typeof body !== 'object') return body;
  const input = (body as { input?: unknown }).input;
  if (!input || typeof input !== 'object' || typeof (input as { duration?: unknown }).duration !== 'number')
    return body;
  const literal = /"duration"\s*:\s*(-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)/.exec(raw.toString('utf8'))?.[1];
  if (!literal || !/[.eE]/.test(literal)) return body;
  return { ...body, input: { ...input, duration: literal } };
}

/** Single tasks (inside /api/v1, after authentication and rate limiting). */
export function tasksRouter({
  tasks,
  bodyLimitBytes,
}: {
  tasks: TaskService;
  bodyLimitBytes: number;
}): Router {
  const router = express.Router();
  defineRoute(router, '/generateTask/:model', {
    post: [
      ...jsonBody(bodyLimitBytes),
      async (req, res) => {
        const body = keepDecimalDuration(req.body, rawBodyOf(req));
        res.json(ok(await tasks.submit(res.locals.auth!, req.params.model as string, body)));
      },
    ],
  });
  defineRoute(router, '/statusTask/:model', {
    get: async (req, res) => {
      res.json(ok(await tasks.status(res.locals.auth!, req.params.model as string, req.query.taskId)));
    },
  });
  return router;
}
