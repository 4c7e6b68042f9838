import express, { type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import type { AccountsService } from '../accounts/service';
import { ApiError, ok } from '../errors';
import { defineRoute } from '../http/routes';
import { jsonBody, parseOrThrow } from '../http/validate';
import { BODY_MODES, type BodyScope } from './bodies';
import type { Logs } from './index';
import { encodeLogCursor } from './position';
import { parseAuditQuery, parseLogQuery, type Parsed } from './query';
import type { PageOf, Position, RequestLogFilter, StoredAuditRow, StoredRequestLog } from './types';
import { auditView, logView, streamExport } from './views';

/** A page of rows as the list endpoints answer it, or the whole set streamed as CSV or JSON lines. */
async function answer<T>(
  res: Response,
  parsed: Parsed<unknown>,
  kind: 'logs' | 'audit',
  read: (limit: number, after?: Position) => Promise<PageOf<T>>,
  view: (row: T) => Record<string, unknown>,
): Promise<void> {
  if (parsed.format !== 'json') return streamExport(res, parsed.format, kind, read, view, parsed.after);
  const page = await read(parsed.limit, parsed.after);
  res.json(ok({ items: page.rows.map(view), nextCursor: encodeLogCursor(page.next) }));
}

/** A row with its kept bodies, as the detail endpoints show it. */
function detailView(
  row: StoredRequestLog & { bodies: { requestBody: string | null; responseBody: string | null } | null },
) {
  return {
    ...logView(row),
    bodies: row.bodies ? { request: row.bodies.requestBody, response: row.bodies.responseBody } : null,
  };
}

/**
 * GET /api/v1/logs (and /logs/{logId}): the caller's account's rows only, whatever the filters say; another
 * account's row is a 404 like a missing one. Mounted after authentication.
 */
export function accountLogsRouter({ logs }: { logs: Logs }): Router {
  const router = express.Router();
  defineRoute(router, '/logs', {
    get: async (req, res) => {
      const parsed = parseLogQuery(req.query, false);
      const filter: RequestLogFilter = { ...parsed.filter, accountId: res.locals.auth!.accountId };
      await logs.flush();
      await answer(res, parsed, 'logs', (limit, after) => logs.store.requests(filter, limit, after), logView);
    },
  });
  defineRoute(router, '/logs/:logId', {
    get: async (req, res) => {
      const row = await logs.store.request(req.params.logId as string);
      if (!row || row.accountId !== res.locals.auth!.accountId)
        throw new ApiError('not_found', `No log row ${req.params.logId as string}`);
      res.json(ok(detailView(row)));
    },
  });
  return router;
}

const bodyModeBody = z.strictObject({
  mode: z.enum(BODY_MODES, { error: 'must be one of off, metadata, full' }).nullable(),
});

/**
 * Behind the admin token (/admin/v1): every account's rows, the audit trail (read only: no route changes or removes a
 * row of it), and the body-logging mode of an account or key.
 */
export function adminLogsRouter({
  logs,
  accounts,
  bodyLimitBytes,
}: {
  logs: Logs;
  accounts: AccountsService;
  bodyLimitBytes: number;
}): Router {
  const router = express.Router();
  defineRoute(router, '/logs', {
    get: async (req, res) => {
      const parsed = parseLogQuery(req.query, true);
      await logs.flush();
      await answer(
        res,
        parsed,
        'logs',
        (limit, after) => logs.store.requests(parsed.filter, limit, after),
        logView,
      );
    },
  });
  defineRoute(router, '/logs/:logId', {
    get: async (req, res) => {
      const row = await logs.store.request(req.params.logId as string);
      if (!row) throw new ApiError('not_found', `No log row ${req.params.logId as string}`);
      res.json(ok(detailView(row)));
    },
  });
  defineRoute(router, '/audit', {
    get: async (req, res) => {
      const parsed = parseAuditQuery(req.query);
      await logs.flush();
      await answer<StoredAuditRow>(
        res,
        parsed,
        'audit',
        (limit, after) => logs.store.audit(parsed.filter, limit, after),
        auditView,
      );
    },
  });
  defineRoute(router, '/log-bodies', {
    get: async (_req, res) => {
      const settings = await logs.bodies.settings();
      res.json(ok({ settings: [...settings].map(([scope, mode]) => ({ scope, mode })) }));
    },
  });
  const setMode = (scopeOf: (id: string) => Promise<{ scope: BodyScope; accountId: string }>) => [
    ...jsonBody(bodyLimitBytes),
    async (req: Request, res: Response) => {
      const { mode } = parseOrThrow(bodyModeBody, req.body, 'body');
      const { scope, accountId } = await scopeOf(req.params.id as string);
      const before = (await logs.bodies.settings()).get(scope) ?? null;
      await logs.bodies.set(scope, mode);
      logs.audit.record(logs.audit.context(req, res.locals.requestId), {
        action: 'logs.bodies.set',
        target: scope,
        accountId,
        before: { mode: before },
        after: { mode },
      });
      res.json(ok({ scope, mode }));
    },
  ];
  defineRoute(router, '/accounts/:id/log-bodies', {
    put: setMode(async (accountId) => {
      await accounts.describeAccount(accountId); // 404 for an unknown account
      return { scope: `account:${accountId}`, accountId };
    }),
  });
  defineRoute(router, '/keys/:id/log-bodies', {
    put: setMode(async (keyId) => {
      const key = await accounts.requireKey(keyId);
      return { scope: `key:${keyId}`, accountId: key.accountId };
    }),
  });
  return router;
}
