import express, { type Router } from 'express';
import { ok } from '../errors';
import { defineRoute } from '../http/routes';
import type { IncomingMessage } from 'node:http';
import { integralDecimalAt, jsonBody } from '../http/validate';
import type { Request, Response } from 'express';
import { ApiError } from '../errors';
import type { Tracing } from '../observability/tracing';
import type { RequestLog } from '../logs';
import { MAX_WAIT_SECONDS, type TaskService } from './service';
import { statusRecord } from './views';

/**
 * `Prefer: wait=N` (RFC 7240, Replicate's convention): how long to hold the answer for the task to finish, in ms,
 * 0 when not asked. Other preferences are ignored; a wait that is not a whole number of seconds from 1 to 60 is a 400.
 */
export function preferredWaitMs(req: Request, res: Response): number {
  const header = req.headers.prefer;
  if (!header) return 0;
  for (const preference of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [name, value] = preference.split('=').map((part) => part.trim());
    if (name.toLowerCase() !== 'wait') continue;
    const seconds = /^\d{1,2}$/.test(value ?? '') ? Number(value) : NaN;
    if (!(seconds >= 1 && seconds <= MAX_WAIT_SECONDS))
      throw new ApiError(
        'invalid_request',
        `header Prefer: wait must be a whole number of seconds from 1 to ${MAX_WAIT_SECONDS} (got ${value ?? 'none'})`,
      );
    res.setHeader('Preference-Applied', `wait=${seconds}`);
    return seconds * 1000;
  }
  return 0;
}

/** Aborts when the client goes away before the answer is sent: a held wait then ends at once. */
function clientGone(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

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
  tracing,
  requestLog,
}: {
  tasks: TaskService;
  bodyLimitBytes: number;
  tracing?: Tracing;
  /** One request-log row per submission (src/logs). */
  requestLog?: RequestLog;
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
        const auth = res.locals.auth!;
        const model = req.params.model as string;
        const logged = requestLog?.submission(req, res, auth, model, res.locals.requestId, res.locals.route!);
        const span = tracing?.taskSubmit(req, res, {
          model: req.params.model as string,
          requestId: res.locals.requestId,
          keyId: auth.keyId,
          accountId: auth.accountId,
        });
        const waitMs = preferredWaitMs(req, res);
        const created = await tasks.submit(auth, req.params.model as string, submitted);
        span?.done(created.taskId, created.prepared.chargeMicros);
        logged?.accepted(created.taskId, created.prepared.chargeMicros, created.route?.id);
        if (!waitMs) return void res.json(ok({ taskId: created.taskId }));
        // Held: the same answer, plus the task's state once it is terminal or the wait is over.
        const task = await tasks.settled(created, waitMs, clientGone(res));
        res.json(ok(statusRecord(task)));
      },
    ],
  });
  defineRoute(router, '/statusTask/:model', {
    get: async (req, res) => {
      const waitMs = preferredWaitMs(req, res);
      const model = req.params.model as string;
      res.json(ok(await tasks.status(res.locals.auth!, model, req.query.taskId, waitMs, clientGone(res))));
    },
  });
  defineRoute(router, '/tasks', {
    get: async (req, res) => {
      res.json(ok(await tasks.list(res.locals.auth!, req.query)));
    },
  });
  defineRoute(router, '/tasks/:taskId', {
    get: async (req, res) => {
      res.json(ok(await tasks.detail(res.locals.auth!, req.params.taskId as string)));
    },
  });
  defineRoute(router, '/tasks/:taskId/cancel', {
    post: async (req, res) => {
      const { cancelled, task } = await tasks.cancel(res.locals.auth!, req.params.taskId as string);
      res.json(
        ok(
          { ...task, cancelled },
          cancelled ? 'success' : `task is already ${String(task.state)}; nothing changed`,
        ),
      );
    },
  });
  return router;
}
