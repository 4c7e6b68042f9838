/**
 * Reference receiver for Genway batch webhooks and signed task callbacks.
 *
 * Verify, then record, then acknowledge:
 *   1. freshness: X-Genway-Timestamp within 5 minutes of now (replays of old captures are refused);
 *   2. signature: `v1,` + hex HMAC-SHA256 over `{eventId}.{timestamp}.{raw body bytes}`, keyed by the secret's UTF-8
 *      bytes, compared in constant time; accept any secret you currently hold (old and new around a rotation);
 *   3. deduplication by event id (deliveries are at-least-once), then answer 2xx (callbacks: exactly 200).
 *
 * Run it: GENWAY_WEBHOOK_SECRETS=whsec_a,whsec_b node dist-examples/webhook-receiver.js (or ts-node)
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

export const FRESHNESS_SECONDS = 5 * 60;

export type Verdict = { ok: true; eventId: string; duplicate: boolean } | { ok: false; reason: string };

function header(headers: http.IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

export function verifyGenwayWebhook({
  rawBody,
  headers,
  secrets,
  now = Date.now(),
  seen,
  prefix = 'Genway',
}: {
  rawBody: Buffer;
  headers: http.IncomingHttpHeaders;
  /** Every secret currently held (during a rotation: the old and the new one). */
  secrets: string[];
  now?: number;
  /** Event ids already processed; a verified new event id is added. */
  seen?: Set<string>;
  prefix?: string;
}): Verdict {
  const eventId = header(headers, `x-${prefix}-event-id`);
  const timestamp = header(headers, `x-${prefix}-timestamp`);
  const signature = header(headers, `x-${prefix}-signature`);
  if (!eventId || !timestamp || !signature) return { ok: false, reason: 'missing signature headers' };
  if (!/^\d+$/.test(timestamp)) return { ok: false, reason: 'malformed timestamp' };
  if (Math.abs(Math.floor(now / 1000) - Number(timestamp)) > FRESHNESS_SECONDS)
    return { ok: false, reason: 'stale timestamp' };
  const given = /^v1,([0-9a-f]{64})$/.exec(signature);
  if (!given) return { ok: false, reason: 'malformed signature' };
  const givenBytes = Buffer.from(given[1], 'hex');
  const valid = secrets.some((secret) => {
    const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
    mac.update(`${eventId}.${timestamp}.`);
    mac.update(rawBody); // the raw bytes, never re-serialised JSON
    return timingSafeEqual(mac.digest(), givenBytes);
  });
  if (!valid) return { ok: false, reason: 'bad signature' };
  const duplicate = seen?.has(eventId) ?? false;
  seen?.add(eventId);
  return { ok: true, eventId, duplicate };
}

/** A runnable receiver: verifies, deduplicates, logs the event, answers 200 (401 when verification fails). */
export function createReceiver(
  secrets: string[],
  onEvent: (event: unknown, eventId: string) => void = () => undefined,
) {
  const seen = new Set<string>();
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const verdict = verifyGenwayWebhook({ rawBody, headers: req.headers, secrets, seen });
      if (!verdict.ok) {
        res.writeHead(401).end(verdict.reason);
        return;
      }
      if (!verdict.duplicate) onEvent(JSON.parse(rawBody.toString('utf8')), verdict.eventId);
      res.writeHead(200).end('ok');
    });
  });
}

if (require.main === module) {
  const secrets = (process.env.GENWAY_WEBHOOK_SECRETS ?? '').split(',').filter(Boolean);
  const port = Number(process.env.PORT ?? 9000);
  createReceiver(secrets, (event, id) => console.log(id, JSON.stringify(event))).listen(port, () =>
    console.log(`webhook receiver on :${port}`),
  );
}
