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

/** The request URL as it may be logged: the value of a `key` query parameter (Gemini-style key) removed. */
export function loggableUrl(url: string): string {
  return url.includes('key=') ? url.replace(/([?&]key=)[^&#]*/gi, '$1[redacted]') : url;
}
