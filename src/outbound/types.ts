/**
 * The one HTTP client for every outbound call Genway makes on a client's behalf (callbacks, webhooks, media probes,
 * relay upstreams): public HTTPS only unless `security.allowPrivateTargets`, the address checked after DNS
 * resolution and pinned for the connection, no redirects followed, time and size bounded.
 */
export interface OutboundRequest {
  method?: 'GET' | 'POST' | 'HEAD';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole exchange, connect to last byte. */
  timeoutMs: number;
  /** The response body is cut (and `truncated` set) past this many bytes; the connection is then closed. */
  maxResponseBytes: number;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  truncated: boolean;
}

export type OutboundFailure = 'invalid_url' | 'blocked_target' | 'timeout' | 'network';

export class OutboundError extends Error {
  constructor(
    readonly reason: OutboundFailure,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundClient {
  /** Never follows redirects: a 3xx is returned as it is. Throws OutboundError. */
  fetch(url: string, request: OutboundRequest): Promise<OutboundResponse>;
}

/** Reads a media file's duration in seconds from the media itself (headers), through the outbound client. */
export type MediaProbe = (url: string) => Promise<{ durationSeconds: number }>;
