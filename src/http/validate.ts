import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';
import type { z } from 'zod';
import { ApiError } from '../errors';
import { describePath, scanJson, type JsonPath } from './json-strict';

/** Deeper JSON bodies are refused: no request of this API nests anywhere near it. */
export const MAX_JSON_DEPTH = 64;

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

/**
 * JSON request bodies: Content-Type must say JSON, size is checked while reading, parse errors are 400s, and what
 * JSON.parse accepts but Genway will not act on (deep nesting, duplicate keys, lone surrogates: see json-strict.ts)
 * is a 400 naming the field, before any handler sees the body.
 */
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
    (req, _res, next) => {
      const raw = rawBodies.get(req);
      rawBodies.delete(req);
      if (!raw) return next();
      const scan = scanJson(raw.toString('utf8'), MAX_JSON_DEPTH);
      if (scan.problem) {
        throw new ApiError(
          'invalid_request',
          `${describePath('body', scan.problem.path)}: ${scan.problem.rule}`,
        );
      }
      if (scan.integralDecimals.size) literals.set(req, scan.integralDecimals);
      next();
    },
  ];
}

const rawBodies = new WeakMap<IncomingMessage, Buffer>();
const literals = new WeakMap<IncomingMessage, Map<string, string>>();

/**
 * The literal text of a number of the body that JSON.parse made an integer although it was written with a fraction
 * or an exponent (`-1.0`), at exactly `path`; undefined when it was written as an integer (or is no number).
 */
export function integralDecimalAt(req: IncomingMessage, path: JsonPath): string | undefined {
  return literals.get(req)?.get(JSON.stringify(path));
}
