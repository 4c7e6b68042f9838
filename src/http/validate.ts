import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import type { z } from 'zod';
import { ApiError } from '../errors';

/**
 * Parses `value` with `schema` or throws a 400 naming the first offending field, e.g.
 * `body.amountUsd: Invalid input: expected number, received string`.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, root: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = [root, ...issue.path.map(String)].join('.');
  const detail =
    issue.code === 'unrecognized_keys' ? `unknown field(s) ${issue.keys.join(', ')}` : issue.message;
  throw new ApiError('invalid_request', `${field}: ${detail}`);
}

/** JSON request bodies: Content-Type must say JSON, size is checked while reading, parse errors are 400s. */
export function jsonBody(limitBytes: number): RequestHandler[] {
  const requireJson: RequestHandler = (req, _res, next) => {
    if (!req.is('application/json')) {
      const got = req.headers['content-type'] ?? 'none';
      throw new ApiError('invalid_request', `Content-Type must be application/json (got ${got})`);
    }
    next();
  };
  return [
    requireJson,
    express.json({
      limit: limitBytes,
      strict: false,
      type: () => true,
      verify: (req, _res, buf) => rawBodies.set(req, buf),
    }),
  ];
}

const rawBodies = new WeakMap<IncomingMessage, Buffer>();

/** The exact bytes of a JSON body parsed by jsonBody (for rules JSON.parse cannot see). */
export function rawBodyOf(req: IncomingMessage): Buffer | undefined {
  return rawBodies.get(req);
}
