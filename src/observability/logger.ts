import pino, { type DestinationStream, type Logger } from 'pino';
import type { Config } from '../config';

export type { Logger };

/**
 * JSON logs. Nothing here logs request headers or bodies, so API keys, the admin token and webhook
 * secrets cannot reach a log line; the redact list is a second fence for fields someone adds later.
 */
export function createLogger(config: Pick<Config, 'log'>, destination?: DestinationStream): Logger {
  return pino(
    {
      level: config.log.level,
      base: { service: 'genway' },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: loggableError },
      redact: {
        paths: [
          'key',
          'apiKey',
          'token',
          'secret',
          'authorization',
          '*.key',
          '*.apiKey',
          '*.token',
          '*.secret',
          '*.authorization',
          'headers.authorization',
          'headers["x-api-key"]',
          'headers["x-goog-api-key"]',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/** Query parameter names (decoded, lower case) whose values are credentials. */
const SECRET_PARAMS = new Set([
  'key',
  'api_key',
  'apikey',
  'api-key',
  'x-api-key',
  'x-goog-api-key',
  'access_token',
  'token',
  'secret',
  'client_secret',
  'authorization',
  'password',
  // A signed result-file URL's signature: the URL is a bearer capability until it expires.
  'sig',
  'signature',
]);
const MAYBE_SECRET = /key|token|secret|auth|pass|sig|%|\+/i;

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).trim().toLowerCase();
  } catch {
    return name.trim().toLowerCase();
  }
}

/**
 * The request URL as it may be logged: the value of every credential query parameter replaced, whatever the
 * spelling of its name (`?KEY=`, `?k%65y=`, `?api_key=`): names are compared decoded and in lower case, the way the
 * gateway reads them. A `#` in a request target (no client sends a fragment) is query text here as it is to the
 * gateway, which reads `?a=1#&key=...` as holding a key.
 */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const query = url.slice(q + 1);
  if (!MAYBE_SECRET.test(query)) return url;
  const parts = query.split('&').map((part) => {
    const eq = part.indexOf('=');
    const name = eq === -1 ? part : part.slice(0, eq);
    return SECRET_PARAMS.has(decodedName(name)) ? `${name}=[redacted]` : part;
  });
  return `${url.slice(0, q + 1)}${parts.join('&')}`;
}

/**
 * An error as it may be logged: its type, message, code and stack (and its cause's), never its other fields. Client
 * libraries hang what they sent on their errors (ioredis the command and its arguments, which hold task JSON and
 * callback tokens; HTTP clients the request), and pino's default serializer would write every one of them.
 */
export function loggableError(err: unknown, depth = 0): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const out: Record<string, unknown> = { type: err.name, message: err.message };
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (err.stack) out.stack = err.stack;
  if (err.cause !== undefined && depth < 3) out.cause = loggableError(err.cause, depth + 1);
  return out;
}
