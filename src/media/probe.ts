import type { MediaProbe, OutboundClient } from '../outbound/types';

/** The part of mediainfo.js used here (its package types are ESM-only; the CJS build is what runs). */
interface MediaInfo {
  analyzeData(
    size: number,
    readChunk: (size: number, offset: number) => Uint8Array,
  ): Promise<{ media?: { track: { '@type': string; Duration?: number | string }[] } }>;
}
type MediaInfoFactory = (options: { format: 'object' }) => Promise<MediaInfo>;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const mediaInfoFactory = (require('mediainfo.js') as { default: MediaInfoFactory }).default;

let shared: Promise<MediaInfo> | undefined;

/** One MediaInfo (WebAssembly) instance per process, created on first use. */
function mediaInfo(): Promise<MediaInfo> {
  shared ??= mediaInfoFactory({ format: 'object' });
  return shared;
}

/**
 * Reads a media file's duration from its own headers (MediaInfo), fetched through the SSRF-safe client, bounded in
 * time and size. Throws an Error whose message is a short reason the client can act on.
 */
export function createMediaProbe(
  outbound: OutboundClient,
  { timeoutMs, maxBytes }: { timeoutMs: number; maxBytes: number },
): MediaProbe {
  return async (url) => {
    let body: Buffer;
    try {
      const res = await outbound.fetch(url, { timeoutMs, maxResponseBytes: maxBytes });
      if (res.status !== 200) throw new Error(`not reachable: HTTP ${res.status}`);
      if (res.truncated) throw new Error(`larger than ${maxBytes} bytes`);
      body = res.body;
    } catch (err) {
      const message = (err as Error).message;
      throw new Error(
        message.startsWith('not reachable') || message.startsWith('larger')
          ? message
          : `not reachable: ${message}`,
      );
    }
    const info = await mediaInfo();
    const result = await info.analyzeData(body.length, (size, offset) =>
      body.subarray(offset, offset + size),
    );
    const tracks = result.media?.track ?? [];
    if (!tracks.some((t) => t['@type'] === 'Video' || t['@type'] === 'Audio')) {
      throw new Error('not a readable audio or video file');
    }
    const general = tracks.find((t) => t['@type'] === 'General');
    const durationSeconds = Number(general?.Duration);
    if (!Number.isFinite(durationSeconds) || durationSeconds <= 0)
      throw new Error('no duration in the media');
    return { durationSeconds };
  };
}
