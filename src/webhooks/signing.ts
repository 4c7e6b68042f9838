import { createHmac } from 'node:crypto';
import type { WebhookScheme } from '../accounts/store';

/**
 * The two ways Genway signs a callback or batch webhook.
 *
 * - `genway` (the spec's scheme, the default): `X-Genway-Event-Id`, `X-Genway-Timestamp` and `X-Genway-Signature:
 *   v1,<hex>`, HMAC-SHA256 of `{eventId}.{timestamp}.{rawBody}` keyed by the secret's UTF-8 bytes.
 * - `standard` (https://www.standardwebhooks.com): `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64>`
 *   over `{id}.{timestamp}.{rawBody}`, keyed by the bytes the `whsec_` secret encodes; one signature per secret a
 *   receiver may hold during a rotation grace, space-separated, so any standard verifier accepts either secret.
 *
 * Secrets are stored as `whsec_` + base64url of 32 random bytes. The spec's scheme shows and uses that text as is;
 * the standard scheme shows the same bytes in the standard base64 its libraries decode.
 */

const PREFIX = 'whsec_';

/** `v1,` + lowercase hex HMAC-SHA256 of `{eventId}.{timestamp}.{rawBody}`, keyed by the secret's UTF-8 bytes. */
export function signDelivery(
  secret: string,
  eventId: string,
  timestamp: number,
  rawBody: string | Buffer,
): string {
  return `v1,${mac(Buffer.from(secret, 'utf8'), eventId, timestamp, rawBody).digest('hex')}`;
}

function mac(key: Buffer, id: string, timestamp: number, body: string | Buffer) {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body);
}

/** The key bytes a `whsec_` secret encodes (either base64 alphabet); a secret without the prefix is its UTF-8 bytes. */
function standardKey(secret: string): Buffer {
  return secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), 'base64') : Buffer.from(secret);
}

/** The secret as the account's scheme shows it to its owner. */
export function showSecret(secret: string, scheme: WebhookScheme): string {
  return scheme === 'standard' && secret.startsWith(PREFIX)
    ? PREFIX + standardKey(secret).toString('base64')
    : secret;
}

export interface HeaderNames {
  eventId: string;
  timestamp: string;
  signature: string;
}

/** The spec's header names for a prefix (`Genway` → `X-Genway-Event-Id` ...). */
export function genwayHeaderNames(prefix: string): HeaderNames {
  return {
    eventId: `X-${prefix}-Event-Id`,
    timestamp: `X-${prefix}-Timestamp`,
    signature: `X-${prefix}-Signature`,
  };
}

const STANDARD_HEADERS: HeaderNames = {
  eventId: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
};

/**
 * The signing headers of one attempt. `secrets[0]` is the one the event was accepted with; the spec's scheme signs
 * with it alone, the standard scheme with every one given.
 */
export function signatureHeaders(
  scheme: WebhookScheme,
  genwayNames: HeaderNames,
  secrets: readonly string[],
  eventId: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  if (scheme === 'genway')
    return {
      [genwayNames.eventId]: eventId,
      [genwayNames.timestamp]: String(timestamp),
      [genwayNames.signature]: signDelivery(secrets[0], eventId, timestamp, body),
    };
  const signatures = secrets.map(
    (secret) => `v1,${mac(standardKey(secret), eventId, timestamp, body).digest('base64')}`,
  );
  return {
    [STANDARD_HEADERS.eventId]: eventId,
    [STANDARD_HEADERS.timestamp]: String(timestamp),
    [STANDARD_HEADERS.signature]: signatures.join(' '),
  };
}
