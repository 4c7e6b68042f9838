import zlib from 'node:zlib';
import { createUsageTap } from '../../src/gateway/usage';
import { GENERATE_STREAM, MESSAGES_STREAM, RESPONSES_STREAM, sse } from '../helpers/mock-vendor';

/** Feeds `bytes` to a fresh tap in pieces of `size` bytes (1 = byte by byte) and returns what it read. */
async function read(
  format: Parameters<typeof createUsageTap>[0],
  contentType: string,
  bytes: Buffer,
  size = bytes.length,
  encoding?: string,
) {
  const tap = createUsageTap(format, contentType, encoding);
  if (!tap) throw new Error('no tap');
  for (let i = 0; i < bytes.length; i += size) tap.write(bytes.subarray(i, i + size));
  return tap.finish();
}

describe('usage read from responses as they pass', () => {
  test.each([1, 7, 64, 100000])(
    'messages event stream in pieces of %i bytes: input + cache, last cumulative output',
    async (size) => {
      expect(await read('messages', 'text/event-stream', Buffer.from(sse(MESSAGES_STREAM)), size)).toEqual({
        usage: { input: 30, output: 7, cacheRead: 5, cacheWrite: 0 },
        model: 'claude-test',
      });
    },
  );

  test('a multi-byte character split across chunks does not hide the event after it', async () => {
    const text = `data: {"type":"content_block_delta","delta":{"text":"✓✓"}}\n\n${sse(MESSAGES_STREAM)}`;
    expect((await read('messages', 'text/event-stream', Buffer.from(text), 1))?.usage.output).toBe(7);
  });

  test('responses stream: usage from response.completed, CRLF line ends too', async () => {
    const text = sse(RESPONSES_STREAM).replace(/\n/g, '\r\n');
    expect(await read('responses', 'text/event-stream', Buffer.from(text), 13)).toEqual({
      usage: { input: 40, output: 11, cacheRead: 8, cacheWrite: 0 },
      model: 'gpt-test',
    });
  });

  test('generateContent stream: the last usageMetadata counts (thoughts are output)', async () => {
    const chunks = [
      ...GENERATE_STREAM,
      { usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 5, thoughtsTokenCount: 2 } },
    ];
    const text = sse(chunks.map((c) => [null, c]));
    expect((await read('generateContent', 'text/event-stream', Buffer.from(text), 5))?.usage).toEqual({
      input: 9,
      output: 7,
      cacheRead: 0,
      cacheWrite: 0,
    });
  });

  test('a JSON body: the top-level usage, not an earlier object or a metadata string named usage', async () => {
    const body = JSON.stringify({
      content: [{ type: 'tool_use', input: { usage: { count: 99 } } }],
      usage: { input_tokens: 12, output_tokens: 3, cache_creation_input_tokens: 4 },
      metadata: { usage: 'internal' },
    });
    expect((await read('messages', 'application/json', Buffer.from(body), 3))?.usage).toEqual({
      input: 16,
      output: 3,
      cacheRead: 0,
      cacheWrite: 4,
    });
  });

  test('a JSON body cut short still yields the usage that arrived', async () => {
    const body = Buffer.from(
      '{"output":[{"text":"hi"}],"usage":{"input_tokens":5,"output_tokens":2},"user":nu',
    );
    expect((await read('responses', 'application/json', body))?.usage.output).toBe(2);
  });

  test('a large JSON body keeps only its tail and still finds the usage at the end', async () => {
    const body = Buffer.from(
      JSON.stringify({
        text: 'x'.repeat(3 << 20),
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2 },
      }),
    );
    expect((await read('generateContent', 'application/json', body, 65536))?.usage.output).toBe(2);
  });

  test.each([
    ['gzip', zlib.gzipSync],
    ['br', zlib.brotliCompressSync],
    ['deflate', zlib.deflateSync],
  ])('a %s body is read through a decompressed copy', async (encoding, compress) => {
    const body = compress(Buffer.from(sse(MESSAGES_STREAM)));
    expect((await read('messages', 'text/event-stream', body, 10, encoding))?.usage.output).toBe(7);
  });

  test('no usage seen: nothing to record; an unknown encoding: no tap at all', async () => {
    expect(await read('messages', 'application/json', Buffer.from('{"error":{}}'))).toBeNull();
    expect(createUsageTap('messages', 'application/json', 'zstd')).toBeNull();
  });
});
