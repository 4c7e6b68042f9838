import dns from 'node:dns';
import net from 'node:net';
import { Agent, request } from 'undici';
import { bareHost, isBlockedAddress, isLoopbackName } from './addresses';
import { OutboundError, type OutboundClient, type OutboundRequest, type OutboundResponse } from './types';

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * Resolves a hostname and refuses it when any address it resolves to is blocked; the vetted address is what the
 * socket connects to, so a second DNS answer cannot swap in a private one (no rebinding between check and use).
 */
export function vettedLookup(hostname: string, options: dns.LookupOptions, callback: LookupCallback): void {
  dns.lookup(hostname, { all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const bad = addresses.find((a) => isBlockedAddress(a.address));
    if (bad || addresses.length === 0) {
      const refusal = new OutboundError(
        'blocked_target',
        `${hostname} resolves to a private, loopback or reserved address`,
      );
      return callback(refusal as unknown as NodeJS.ErrnoException, []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

export interface OutboundOptions {
  allowPrivateTargets: boolean;
  connectTimeoutMs?: number;
}

/** The one client for callbacks, webhooks and media probes. */
export function createOutboundClient({
  allowPrivateTargets,
  connectTimeoutMs = 10_000,
}: OutboundOptions): OutboundClient & {
  close(): Promise<void>;
} {
  const agent = new Agent({
    connect: { timeout: connectTimeoutMs, ...(allowPrivateTargets ? {} : { lookup: vettedLookup }) },
    connections: 256,
  });

  async function fetchUrl(target: string, req: OutboundRequest): Promise<OutboundResponse> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      throw new OutboundError('invalid_url', 'not a valid URL');
    }
    const origin = url.origin;
    if (url.protocol !== 'https:' && !(allowPrivateTargets && url.protocol === 'http:')) {
      throw new OutboundError('invalid_url', `${origin}: only https targets are allowed`);
    }
    const host = bareHost(url.hostname);
    if (!allowPrivateTargets && (isLoopbackName(host) || (net.isIP(host) && isBlockedAddress(host)))) {
      throw new OutboundError('blocked_target', `${origin} is a private, loopback or reserved address`);
    }
    const signal = AbortSignal.timeout(req.timeoutMs);
    try {
      const res = await request(url, {
        dispatcher: agent,
        method: req.method ?? 'GET',
        headers: req.headers,
        body: req.body,
        signal, // undici's request() never follows redirects: a 3xx comes back as it is
      });
      const chunks: Buffer[] = [];
      let size = 0;
      let truncated = false;
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        if (size + buf.length > req.maxResponseBytes) {
          chunks.push(buf.subarray(0, req.maxResponseBytes - size));
          truncated = true;
          res.body.destroy();
          break;
        }
        chunks.push(buf);
        size += buf.length;
      }
      return { status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), truncated };
    } catch (err) {
      if (err instanceof OutboundError) throw err;
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof OutboundError) throw cause;
      if (signal.aborted)
        throw new OutboundError('timeout', `${origin} did not answer within ${req.timeoutMs} ms`);
      throw new OutboundError('network', `${origin}: ${(err as Error).message}`);
    }
  }

  return { fetch: fetchUrl, close: () => agent.close() };
}
