import express, { type Router } from 'express';
import { ok } from '../errors';
import { defineRoute } from '../http/routes';
import type { IncomingMessage } from 'node:http';
import { integralDecimalAt, jsonBody } from '../http/validate';
import type { TaskService } from './service';

/**
 * `JSON.parse` turns `-1.0` into `-1`, yet the spec rejects decimal durations such as `-1.0`. When the body wrote
 * this very `input` object's `duration` (at `path`, the one that is priced and run) as a decimal or exponent
 * literal, hand the model that literal text so its own rule (integer or numeric string) rejects it with its own
 * message.
 */
export function keepDecimalDuration(
  input: unknown,
  req: IncomingMessage,
  path: (string | number)[],
): unknown {
  if (!input || typeof input !== 'object' || typeof (input as { duration?: unknown }).duration !== 'number') {
    return input;
  }
  const literal = integralDecimalAt(req, [...path, 'duration']);
  return literal ? { ...input, duration: literal } : input;
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
        const body = req.body as { input?: unknown } | null;
        const submitted =
          body && typeof body === 'object'
            ? { ...body, input: keepDecimalDuration(body.input, req, ['input']) }
            : body;
        res.json(ok(await tasks.submit(res.locals.auth!, req.params.model as string, submitted)));
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
