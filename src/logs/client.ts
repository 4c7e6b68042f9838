import type { IncomingMessage } from 'node:http';

const MAX_AGENT = 256;

/** The client's User-Agent, bounded. */
export function userAgentOf(req: IncomingMessage): string | null {
  const agent = req.headers['user-agent'];
  return typeof agent === 'string' && agent ? agent.slice(0, MAX_AGENT) : null;
}

/**
 * The client's address: with `server.trustProxy`, the first address of `X-Forwarded-For` (what Express's `req.ip`
 * says with `trust proxy` on: the proxy in front is believed about who called it); otherwise the peer's address,
 * whatever a client wrote in that header.
 */
export function clientIpOf(req: IncomingMessage, trustProxy: boolean): string | null {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
    if (first && first.length <= 64 && /^[0-9A-Fa-f.:]+$/.test(first)) return first;
  }
  const peer = req.socket?.remoteAddress;
  if (!peer) return null;
  return peer.startsWith('::ffff:') ? peer.slice(7) : peer;
}
