import fc from 'fast-check';
import zlib from 'node:zlib';
import { AnswerEnd, createUsageTap, type UsageReading } from '../../src/gateway/usage';
import type { UsageFormat } from '../../src/gateway/vendor';
import { anthropic } from '../../src/gateway/vendors/anthropic';
import { gemini } from '../../src/gateway/vendors/gemini';
import { openai } from '../../src/gateway/vendors/openai';
import { GENERATE_STREAM, MESSAGES_STREAM, RESPONSES_STREAM, sse } from '../helpers/mock-vendor';

const { messages, batchResults } = anthropic.usage;
const { responses, responsesWhole, chat, batchOutput } = openai.usage;
const { generateContent, generateContentGrounded, callsOnly, batchLines, batchInline } = gemini.usage;

/** Feeds `bytes` to a fresh tap in pieces of `size` bytes (1 = byte by byte) and returns everything it read. */
async function readAll(
  format: UsageFormat,
  contentType: string,
  bytes: Buffer,
  size = bytes.length,
  encoding?: string,
): Promise<UsageReading[]> {
  const tap = createUsageTap(format, contentType, encoding);
  if (!tap) throw new Error('no tap');
  for (let i = 0; i < bytes.length; i += size) tap.write(bytes.subarray(i, i + size));
  return tap.finish();
}

/** The one reading of a single call, or null. */
async function read(...args: Parameters<typeof readAll>): Promise<UsageReading | null> {
  const readings = await readAll(...args);
  expect(readings.length).toBeLessThanOrEqual(1);
  return readings[0] ?? null;
}

const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0, reasoning = 0) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  reasoning,
});

describe('usage read from responses as they pass', () => {
  test.each([1, 7, 64, 100000])(
    'messages event stream in pieces of %i bytes: input, cache reads apart, last cumulative output',
    async (size) => {
      expect(await read(messages, 'text/event-stream', Buffer.from(sse(MESSAGES_STREAM)), size)).toEqual({
        usage: tokens(25, 7, 5),
        model: 'claude-test',
        requests: 1,
      });
    },
  );

  test('a multi-byte character split across chunks does not hide the event after it', async () => {
    const text = `data: {"type":"content_block_delta","delta":{"text":"✓✓"}}\n\n${sse(MESSAGES_STREAM)}`;
    expect((await read(messages, 'text/event-stream', Buffer.from(text), 1))?.usage.output).toBe(7);
  });

  test('responses stream: cached input and reasoning output counted apart, CRLF line ends too', async () => {
    const text = sse(RESPONSES_STREAM).replace(/\n/g, '\r\n');
    // input_tokens 40 of which 8 cached; output_tokens 11 of which 2 reasoning.
    expect(await read(responses, 'text/event-stream', Buffer.from(text), 13)).toEqual({
      usage: tokens(32, 9, 8, 0, 2),
      model: 'gpt-test',
      requests: 1,
    });
  });

  test('generateContent stream: the last usageMetadata counts; thoughts and cached content apart', async () => {
    const chunks = [
      ...GENERATE_STREAM,
      {
        usageMetadata: {
          promptTokenCount: 90,
          cachedContentTokenCount: 60,
          candidatesTokenCount: 5,
          thoughtsTokenCount: 2,
        },
      },
    ];
    const text = sse(chunks.map((c) => [null, c]));
    expect((await read(generateContent, 'text/event-stream', Buffer.from(text), 5))?.usage).toEqual(
      tokens(30, 5, 60, 0, 2),
    );
  });

  test('chat completions stream: the include_usage chunk, cached prompt and reasoning apart', async () => {
    const chunk = (delta: unknown, usage: unknown = null) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      model: 'gpt-test',
      choices: delta ? [{ index: 0, delta }] : [],
      usage,
    });
    const text =
      sse([
        [null, chunk({ role: 'assistant', content: 'Hi' })],
        [null, chunk({ content: ' there' })],
        [
          null,
          chunk(null, {
            prompt_tokens: 50,
            completion_tokens: 20,
            prompt_tokens_details: { cached_tokens: 10 },
            completion_tokens_details: { reasoning_tokens: 6 },
          }),
        ],
      ]) + 'data: [DONE]\n\n';
    expect(await read(chat, 'text/event-stream', Buffer.from(text), 11)).toEqual({
      usage: tokens(40, 14, 10, 0, 6),
      model: 'gpt-test',
      requests: 1,
    });
  });

  test('chat completions and embeddings JSON bodies', async () => {
    const completion = JSON.stringify({
      id: 'chatcmpl-2',
      choices: [{ message: { role: 'assistant', content: 'x' } }],
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
    });
    expect((await read(chat, 'application/json', Buffer.from(completion)))?.usage).toEqual(tokens(7, 3));
    const embeddings = JSON.stringify({
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: 'AAAA' }],
      model: 'text-embedding-test',
      usage: { prompt_tokens: 8, total_tokens: 8 },
    });
    expect((await read(chat, 'application/json', Buffer.from(embeddings)))?.usage).toEqual(tokens(8, 0));
  });

  test('a JSON body: the top-level usage, not an earlier object or a metadata string named usage', async () => {
    const body = JSON.stringify({
      content: [{ type: 'tool_use', input: { usage: { count: 99 } } }],
      usage: { input_tokens: 12, output_tokens: 3, cache_creation_input_tokens: 4 },
      metadata: { usage: 'internal' },
    });
    expect((await read(messages, 'application/json', Buffer.from(body), 3))?.usage).toEqual(
      tokens(12, 3, 0, 4),
    );
  });

  test('a JSON body: a usage object nested after the real one (a back end that writes usage first) is content, not the bill', async () => {
    // A model can be asked for a tool call whose input holds `usage` with the marker; a back end behind a custom base
    // URL may put the real usage ahead of the content.
    const usageFirst = JSON.stringify({
      usage: { input_tokens: 1200, output_tokens: 300 },
      content: [{ type: 'tool_use', input: { usage: { input_tokens: 1, output_tokens: 1 } } }],
    });
    for (const size of [1, 7, usageFirst.length])
      expect((await read(messages, 'application/json', Buffer.from(usageFirst), size))?.usage).toEqual(
        tokens(1200, 300),
      );
    // A tool's schema after the usage (Responses' `tools`), nested in arrays and objects.
    const toolsAfter = JSON.stringify({
      output: [],
      usage: { input_tokens: 40, output_tokens: 9 },
      tools: [
        { type: 'function', parameters: { properties: { usage: { input_tokens: 0, output_tokens: 0 } } } },
      ],
    });
    expect((await read(responses, 'application/json', Buffer.from(toolsAfter)))?.usage.output).toBe(9);
    // Only nested ones: nothing is read rather than a made-up bill.
    const nestedOnly = JSON.stringify({
      content: [{ input: { usage: { input_tokens: 1, output_tokens: 1 } } }],
    });
    expect(await read(messages, 'application/json', Buffer.from(nestedOnly))).toBeNull();
    // Gemini's streamed JSON array: each element's usageMetadata is at its top level; the last one counts.
    const array = JSON.stringify([
      { candidates: [], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } },
      {
        candidates: [
          { content: { parts: [{ functionCall: { args: { usageMetadata: { promptTokenCount: 0 } } } }] } },
        ],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 5 },
      },
    ]);
    expect((await read(generateContent, 'application/json', Buffer.from(array)))?.usage).toEqual(
      tokens(3, 5),
    );
  });

  test('a JSON body whose usage comes ahead of more than the tail Genway keeps is still read, front to back', async () => {
    // vLLM writes `prompt_logprobs` after `usage`, as long as the prompt: a client could push the usage out of the tail.
    const logprobs = Array.from({ length: 4000 }, (_, i) => ({
      [String(i)]: { logprob: -1.25, rank: 1, decoded_token: i % 2 ? 'usage' : '"usage": {' },
    }));
    const chatBody = JSON.stringify({
      id: 'cmpl-1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi \\ "usage":{}' } }],
      usage: { prompt_tokens: 7000, completion_tokens: 9, total_tokens: 7009 },
      prompt_logprobs: logprobs,
    });
    expect(chatBody.length).toBeGreaterThan(3 * 65536);
    // In pieces whose edges fall inside the key, inside escapes, and inside the usage object.
    for (const size of [7, 1000, 4096, 65536, chatBody.length])
      expect((await read(chat, 'application/json', Buffer.from(chatBody), size))?.usage).toEqual(
        tokens(7000, 9),
      );

    // Only nested usage objects ahead (a tool call's input), and a usage-like key in a string: nothing is read.
    const nestedOnly = JSON.stringify({
      content: [{ type: 'tool_use', input: { usage: { input_tokens: 1, output_tokens: 1 } } }],
      note: '"usage":{"input_tokens":2,"output_tokens":2}',
      filler: 'x'.repeat(200_000),
    });
    for (const size of [7, 4096])
      expect(await read(messages, 'application/json', Buffer.from(nestedOnly), size)).toBeNull();

    // The real usage first, then a nested fake deep in the long tail: the real one is the bill.
    const fakeLater = JSON.stringify({
      usage: { input_tokens: 1200, output_tokens: 300 },
      filler: 'y'.repeat(100_000),
      content: [{ type: 'tool_use', input: { usage: { input_tokens: 1, output_tokens: 1 } } }],
      more: 'z'.repeat(100_000),
    });
    expect((await read(messages, 'application/json', Buffer.from(fakeLater), 1000))?.usage).toEqual(
      tokens(1200, 300),
    );

    // Gemini's array: the last element's usage leads a long element of its own.
    const array = JSON.stringify([
      { usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1 } },
      {
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 8 },
        candidates: [{ text: 'w'.repeat(150_000) }],
      },
    ]);
    expect((await read(generateContent, 'application/json', Buffer.from(array), 5000))?.usage).toEqual(
      tokens(3, 8),
    );

    // A usage object too long to be one is not held (nor read).
    const huge = JSON.stringify({
      usage: { input_tokens: 5, output_tokens: 5, pad: 'p'.repeat(100_000) },
      rest: 'r'.repeat(100_000),
    });
    expect(await read(messages, 'application/json', Buffer.from(huge), 4096)).toBeNull();
  });

  test('a JSON body read as bytes: JSON whitespace around the colon, multi-byte text, braces and escaped quotes in strings', async () => {
    const body = Buffer.from(
      '{"content":[{"type":"text","text":"caf\u00e9 ✓ 😀 \\"usage\\": {\\"output_tokens\\": 1}"}],' +
        '"usage"\r\n\t :  \n{"input_tokens":6,"service_tier":"é } { \\" ✓","output_tokens":4}}',
    );
    expect(JSON.parse(body.toString()).usage.output_tokens).toBe(4); // the body is valid JSON
    for (const size of [1, 5, body.length])
      expect((await read(messages, 'application/json', body, size))?.usage).toEqual(tokens(6, 4));
    // `"usage"` not followed by `: {` (a string value) is passed over for the object before it.
    const stringAfter = Buffer.from(
      '{"usage":{"input_tokens":2,"output_tokens":1},"meta":{"label":"usage","usage" : "none"}}',
    );
    expect((await read(messages, 'application/json', stringAfter))?.usage).toEqual(tokens(2, 1));
  });

  test('a JSON body cut short still yields the usage that arrived', async () => {
    const body = Buffer.from(
      '{"output":[{"text":"hi"}],"usage":{"input_tokens":5,"output_tokens":2},"user":nu',
    );
    expect((await read(responses, 'application/json', body))?.usage.output).toBe(2);
  });

  test('a large JSON body keeps only its tail and still finds the usage at the end', async () => {
    const body = Buffer.from(
      JSON.stringify({
        text: 'x'.repeat(3 << 20),
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2 },
      }),
    );
    expect((await read(generateContent, 'application/json', body, 65536))?.usage.output).toBe(2);
  });

  test.each([
    ['gzip', zlib.gzipSync],
    ['br', zlib.brotliCompressSync],
    ['deflate', zlib.deflateSync],
  ])('a %s body is read through a decompressed copy', async (encoding, compress) => {
    const body = compress(Buffer.from(sse(MESSAGES_STREAM)));
    expect((await read(messages, 'text/event-stream', body, 10, encoding))?.usage.output).toBe(7);
  });

  test('no usage seen: nothing to record; an unknown encoding: no tap at all', async () => {
    expect(await read(messages, 'application/json', Buffer.from('{"error":{}}'))).toBeNull();
    expect(createUsageTap(messages, 'application/json', 'zstd')).toBeNull();
  });

  test('a response without token counts (Gemini embeddings) is counted as one call', async () => {
    expect(await read(callsOnly, 'application/json', Buffer.from('{"embedding":{"values":[0.1]}}'))).toEqual({
      usage: tokens(0, 0),
      requests: 1,
    });
  });

  test('Anthropic batch results (JSON lines): succeeded results summed per model, others skipped', async () => {
    const line = (model: string, input: number, output: number, cacheRead = 0) =>
      JSON.stringify({
        custom_id: `c-${input}`,
        result: {
          type: 'succeeded',
          message: {
            id: 'msg',
            model,
            content: [{ type: 'text', text: 'a "succeeded" answer\nwith a newline escaped' }],
            usage: { input_tokens: input, output_tokens: output, cache_read_input_tokens: cacheRead },
          },
        },
      });
    const body = [
      line('claude-a', 10, 5),
      JSON.stringify({ custom_id: 'e', result: { type: 'errored', error: { type: 'invalid_request' } } }),
      line('claude-a', 20, 7, 3),
      line('claude-b', 1, 1),
    ].join('\n'); // no newline after the last line
    const readings = await readAll(batchResults, 'application/binary', Buffer.from(body), 17);
    expect(readings).toEqual([
      { model: 'claude-a', usage: tokens(30, 12, 3), requests: 2 },
      { model: 'claude-b', usage: tokens(1, 1), requests: 1 },
    ]);
  });

  test('Anthropic cache writes split by how long they are kept: the hour-long ones apart, in a body, a stream and summed batch results', async () => {
    const usage = {
      input_tokens: 10,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      cache_read_input_tokens: 0,
      output_tokens: 5,
    };
    const split = { ...tokens(10, 5, 0, 3000), cacheWrite1h: 2000 };
    expect((await read(messages, 'application/json', Buffer.from(JSON.stringify({ usage }))))?.usage).toEqual(
      split,
    );
    // message_start carries the split, message_delta the running output (and, on newer back ends, the totals again).
    const stream = sse([
      [
        'message_start',
        { type: 'message_start', message: { model: 'claude-x', usage: { ...usage, output_tokens: 1 } } },
      ],
      [
        'message_delta',
        { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } },
      ],
    ]);
    expect((await read(messages, 'text/event-stream', Buffer.from(stream), 9))?.usage).toEqual(split);
    // Only the split, without the total: the total is the sum; a total below the hour-long part is raised to it.
    const bare = {
      input_tokens: 1,
      output_tokens: 1,
      cache_creation: { ephemeral_5m_input_tokens: 4, ephemeral_1h_input_tokens: 6 },
    };
    expect(
      (await read(messages, 'application/json', Buffer.from(JSON.stringify({ usage: bare }))))?.usage,
    ).toEqual({
      ...tokens(1, 1, 0, 10),
      cacheWrite1h: 6,
    });
    const short = { ...bare, cache_creation_input_tokens: 2 };
    expect(
      (await read(messages, 'application/json', Buffer.from(JSON.stringify({ usage: short }))))?.usage,
    ).toEqual({
      ...tokens(1, 1, 0, 6),
      cacheWrite1h: 6,
    });
    // Batch results: a result without the split beside one with it sums to numbers, not NaN.
    const line = (u: object) =>
      JSON.stringify({
        custom_id: 'c',
        result: { type: 'succeeded', message: { model: 'claude-a', usage: u } },
      });
    const body = [
      line({ input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 7 }),
      line(usage),
    ].join('\n');
    expect(await readAll(batchResults, 'application/binary', Buffer.from(body))).toEqual([
      { model: 'claude-a', usage: { ...tokens(11, 6, 0, 3007), cacheWrite1h: 2000 }, requests: 2 },
    ]);
  });

  test('server-side tools billed per call: Anthropic web searches from usage, OpenAI web and file search calls from output items', async () => {
    const claude = {
      input_tokens: 10,
      output_tokens: 5,
      server_tool_use: { web_search_requests: 3, web_fetch_requests: 2 },
    };
    expect(
      (await read(messages, 'application/json', Buffer.from(JSON.stringify({ usage: claude }))))?.usage,
    ).toEqual({
      ...tokens(10, 5),
      tools: { web_search: 3 },
    });
    const response = {
      object: 'response',
      model: 'gpt-x',
      output: [
        { type: 'web_search_call', id: 'ws_1', action: { type: 'search', query: 'q' } },
        { type: 'web_search_call', id: 'ws_2', action: { type: 'search', query: 'r' } },
        { type: 'file_search_call', id: 'fs_1' },
        { type: 'message', content: [{ type: 'output_text', text: 'a "web_search_call" in text' }] },
      ],
      usage: { input_tokens: 20, output_tokens: 7 },
    };
    const calls = { ...tokens(20, 7), tools: { web_search_call: 2, file_search_call: 1 } };
    // A stream's last event carries the output items; a JSON body is read whole by the format for calls with tools.
    const stream = sse([['response.completed', { type: 'response.completed', response }]]);
    expect((await read(responses, 'text/event-stream', Buffer.from(stream), 5))?.usage).toEqual(calls);
    const body = Buffer.from(JSON.stringify(response));
    expect((await read(responsesWhole, 'application/json', body, 7))?.usage).toEqual(calls);
    // The hot path's format reads only the usage of a JSON body.
    expect((await read(responses, 'application/json', body))?.usage).toEqual(tokens(20, 7));
    // Read in passing, not held: a body of megabytes (an image the response generated) is counted all the same.
    const long = {
      ...response,
      output: [...response.output, { type: 'message', content: 'x'.repeat(9 << 20) }],
    };
    expect(
      (await read(responsesWhole, 'application/json', Buffer.from(JSON.stringify(long)), 1 << 20))?.usage,
    ).toEqual(calls);
    // Batch results sum the calls of each model.
    const line = (u: object) =>
      JSON.stringify({
        custom_id: 'c',
        result: { type: 'succeeded', message: { model: 'claude-a', usage: u } },
      });
    const lines = [line(claude), line({ input_tokens: 1, output_tokens: 1 }), line(claude)].join('\n');
    expect(await readAll(batchResults, 'application/binary', Buffer.from(lines))).toEqual([
      { model: 'claude-a', usage: { ...tokens(21, 11), tools: { web_search: 6 } }, requests: 3 },
    ]);
  });

  test("the service tier an answer reports: a chat body's top-level one, a stream's last chunk, a response read whole", async () => {
    const body = JSON.stringify({
      id: 'c',
      choices: [{ message: { content: 'say "service_tier":"default"' } }],
      usage: { prompt_tokens: 4, completion_tokens: 2 },
      service_tier: 'flex',
      system_fingerprint: 'fp',
    });
    expect((await read(chat, 'application/json', Buffer.from(body), 5))?.usage).toEqual({
      ...tokens(4, 2),
      tier: 'flex',
    });
    const chunks = sse([
      [null, { choices: [{ delta: { content: 'a' } }], service_tier: 'priority' }],
      [null, { choices: [], usage: { prompt_tokens: 4, completion_tokens: 2 }, service_tier: 'priority' }],
    ]);
    expect((await read(chat, 'text/event-stream', Buffer.from(chunks)))?.usage).toEqual({
      ...tokens(4, 2),
      tier: 'priority',
    });
    // A response's tail may end in a client's own keys (metadata): only a whole read knows the top-level tier.
    const response = JSON.stringify({
      object: 'response',
      service_tier: 'flex',
      usage: { input_tokens: 4, output_tokens: 2 },
      metadata: { service_tier: 'default' },
    });
    expect((await read(responsesWhole, 'application/json', Buffer.from(response)))?.usage).toEqual({
      ...tokens(4, 2),
      tier: 'flex',
    });
    expect((await read(responses, 'application/json', Buffer.from(response)))?.usage).toEqual(tokens(4, 2));
  });

  test('Gemini grounding with Google Search: the grounded prompt and its queries, from a body, an array of chunks and a stream', async () => {
    const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
    const grounded = (queries: string[]) => ({
      content: { parts: [{ text: 'x'.repeat(80 << 10) }] },
      groundingMetadata: { webSearchQueries: queries, searchEntryPoint: { renderedContent: '<div/>' } },
    });
    const calls = (n: number) => ({
      ...tokens(10, 5),
      tools: { grounded_prompt: n > 0 ? 1 : 0, google_search_query: n },
    });
    // One answer: its grounding more than the tail before its usage.
    const body = JSON.stringify({
      candidates: [grounded(['a', 'b'])],
      usageMetadata,
      modelVersion: 'gemini-x',
    });
    expect((await read(generateContentGrounded, 'application/json', Buffer.from(body), 4096))?.usage).toEqual(
      calls(2),
    );
    // streamGenerateContent without alt=sse: an array of chunks, the grounding in one, the totals in the last.
    const chunks = JSON.stringify([
      { candidates: [{ content: { parts: [{ text: 'a' }] } }], usageMetadata: { promptTokenCount: 10 } },
      { candidates: [grounded(['a', 'b', 'c'])] },
      { candidates: [{ content: { parts: [{ text: 'b' }] } }], usageMetadata },
    ]);
    expect(
      (await read(generateContentGrounded, 'application/json', Buffer.from(chunks), 4096))?.usage,
    ).toEqual(calls(3));
    // An event stream: the chunk carrying the grounding (a chunk's few tokens) is read, usage or not.
    const events = sse([
      [null, { candidates: [{ ...grounded(['q']), content: { parts: [{ text: 'a' }] } }] }],
      [null, { candidates: [{ content: { parts: [{ text: 'b' }] } }], usageMetadata }],
    ]);
    expect((await read(generateContent, 'text/event-stream', Buffer.from(events), 1000))?.usage).toEqual(
      calls(1),
    );
    // Grounding offered, no search run: nothing to price.
    const unsearched = JSON.stringify({ candidates: [grounded([])], usageMetadata });
    expect((await read(generateContentGrounded, 'application/json', Buffer.from(unsearched)))?.usage).toEqual(
      calls(0),
    );
  });

  test('OpenAI batch output (JSON lines): chat and responses bodies, per model', async () => {
    const body = [
      {
        id: 'batch_req_1',
        custom_id: 'a',
        response: {
          status_code: 200,
          body: { model: 'gpt-a', usage: { prompt_tokens: 10, completion_tokens: 4 } },
        },
        error: null,
      },
      {
        id: 'batch_req_2',
        custom_id: 'b',
        response: {
          status_code: 200,
          body: {
            model: 'gpt-b',
            usage: {
              input_tokens: 9,
              input_tokens_details: { cached_tokens: 4 },
              output_tokens: 3,
              output_tokens_details: { reasoning_tokens: 1 },
            },
          },
        },
        error: null,
      },
    ]
      .map((l) => `${JSON.stringify(l)}\n`)
      .join('');
    expect(await readAll(batchOutput, 'application/octet-stream', Buffer.from(body), 5)).toEqual([
      { model: 'gpt-a', usage: tokens(10, 4), requests: 1 },
      { model: 'gpt-b', usage: tokens(5, 2, 4, 0, 1), requests: 1 },
    ]);
  });

  describe('events and results too long to hold whole are read in passing', () => {
    /** Base64-like filler: `size` bytes with escapes and quotes in JSON, as image data and logprobs carry. */
    const filler = (size: number) => 'A+/z\\"\u00e9\n'.repeat(Math.ceil(size / 11)).slice(0, size);

    test.each([4 << 10, 64 << 10, 1 << 20])(
      'a streamed image: its completed event, megabytes of base64 before the usage, in pieces of %i bytes',
      async (size) => {
        const { images } = openai.usage;
        const body = sse([
          [
            'image_generation.partial_image',
            { type: 'image_generation.partial_image', b64_json: filler(100) },
          ],
          [
            'image_generation.completed',
            {
              type: 'image_generation.completed',
              b64_json: filler(3 << 20),
              usage: { input_tokens: 50, output_tokens: 4160, input_tokens_details: { cached_tokens: 10 } },
            },
          ],
        ]);
        expect(await read(images, 'text/event-stream', Buffer.from(body), size)).toEqual({
          model: undefined,
          usage: tokens(40, 4160, 10),
          requests: 1,
        });
      },
    );

    test("a responses stream whose completed event holds a generated image: the response's usage and model", async () => {
      const completed = {
        type: 'response.completed',
        response: {
          model: 'gpt-long',
          output: [{ type: 'image_generation_call', result: filler(2 << 20) }],
          usage: { input_tokens: 7, output_tokens: 900, output_tokens_details: { reasoning_tokens: 100 } },
        },
      };
      const body = sse([['response.completed', completed]]);
      expect(await read(responses, 'text/event-stream', Buffer.from(body), 16 << 10)).toEqual({
        model: 'gpt-long',
        usage: tokens(7, 800, 0, 0, 100),
        requests: 1,
      });
    });

    test('batch output lines of megabytes (logprobs) beside short ones: each is one result', async () => {
      const long = {
        custom_id: 'long',
        response: {
          body: {
            model: 'gpt-a',
            choices: [{ logprobs: { content: [{ token: filler(2 << 20), logprob: -0.5 }] } }],
            usage: { prompt_tokens: 30, completion_tokens: 20 },
          },
        },
      };
      const short = {
        custom_id: 's',
        response: { body: { model: 'gpt-a', usage: { prompt_tokens: 1, completion_tokens: 2 } } },
      };
      const body = [short, long, short, long].map((l) => `${JSON.stringify(l)}\n`).join('');
      for (const size of [4 << 10, 1 << 20, body.length]) {
        expect(await readAll(batchOutput, 'application/octet-stream', Buffer.from(body), size)).toEqual([
          { model: 'gpt-a', usage: tokens(62, 44), requests: 4 },
        ]);
      }
    });

    test('a long result cut short counts for nothing, and the results after it still count', async () => {
      const long = `{"custom_id":"x","response":{"body":{"model":"gpt-a","usage":{"prompt_tokens":5,"completion_tokens":5},"pad":"${filler(200 << 10)}`;
      const short = {
        custom_id: 's',
        response: { body: { model: 'gpt-a', usage: { prompt_tokens: 1, completion_tokens: 2 } } },
      };
      const body = `${long}\n${JSON.stringify(short)}\n${long}`;
      expect(await readAll(batchOutput, 'application/octet-stream', Buffer.from(body), 8 << 10)).toEqual([
        { model: 'gpt-a', usage: tokens(1, 2), requests: 1 },
      ]);
    });
  });

  describe('gemini batches', () => {
    const result = (model: string, input: number, output: number) => ({
      candidates: [
        // A function call's arguments are the model's: a usageMetadata inside them is content, not the bill.
        {
          content: {
            parts: [{ functionCall: { name: 'f', args: { usageMetadata: { promptTokenCount: 1e9 } } } }],
          },
        },
      ],
      usageMetadata: { promptTokenCount: input, candidatesTokenCount: output, cachedContentTokenCount: 1 },
      modelVersion: model,
    });

    test('inline results in both places the vendor puts them count once, per model', async () => {
      const output = {
        inlinedResponses: {
          inlinedResponses: [
            { response: result('gemini-a', 10, 4), metadata: { key: '1' } },
            { error: { code: 13, message: 'failed' }, metadata: { key: '2' } },
            { response: result('gemini-a', 20, 6), metadata: { key: '3' } },
            { response: result('gemini-b', 5, 5), metadata: { key: '4' } },
          ],
        },
      };
      const body = JSON.stringify({
        name: 'batches/1',
        metadata: { state: 'BATCH_STATE_SUCCEEDED', output },
        done: true,
        response: output,
      });
      for (const size of [1, 13, body.length]) {
        expect(await readAll(batchInline, 'application/json', Buffer.from(body), size)).toEqual([
          { model: 'gemini-a', usage: tokens(28, 10, 2), requests: 2 },
          { model: 'gemini-b', usage: tokens(4, 5, 1), requests: 1 },
        ]);
      }
      // Only one place holds them (a pending batch holds none): read from there.
      const once = JSON.stringify({ name: 'batches/1', done: true, response: output });
      expect(await readAll(batchInline, 'application/json', Buffer.from(once), 7)).toHaveLength(2);
      expect(
        await readAll(batchInline, 'application/json', Buffer.from('{"name":"batches/1","metadata":{}}')),
      ).toEqual([]);
    });

    test('a results file (JSON lines of key and response)', async () => {
      const body = [
        { key: '1', response: result('gemini-a', 10, 4) },
        { key: '2', error: { code: 13 } },
        { key: '3', response: result('gemini-a', 20, 6) },
      ]
        .map((l) => `${JSON.stringify(l)}\n`)
        .join('');
      expect(await readAll(batchLines, 'application/octet-stream', Buffer.from(body), 9)).toEqual([
        { model: 'gemini-a', usage: tokens(28, 10, 2), requests: 2 },
      ]);
    });
  });

  test("a stream's answer is out after its last ending marker, unless something resumes after it, wherever the pieces fall", () => {
    const stop = 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n';
    const start = 'event: content_block_start\ndata: {"type":"content_block_start","index":1}\n\n';
    const delta = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":1}\n\n';
    const outAfter = (text: string, size: number) => {
      const answer = AnswerEnd.of(messages)!;
      for (let i = 0; i < text.length; i += size) answer.feed(Buffer.from(text.slice(i, i + size)));
      return answer.out;
    };
    for (const size of [1, 5, 31, 1000]) {
      expect([size, outAfter(delta + stop, size)]).toEqual([size, true]);
      expect([size, outAfter(delta + stop + start, size)]).toEqual([size, false]);
      expect([size, outAfter(delta + stop + start + delta + stop, size)]).toEqual([size, true]);
      expect([size, outAfter(delta, size)]).toEqual([size, false]);
    }
    expect(AnswerEnd.of(gemini.usage.generateContent)).toBeUndefined();
  });

  test('a stream read in any pieces reads what it reads whole (lines carried across pieces)', async () => {
    const cases: [UsageFormat, Buffer][] = [
      [messages, Buffer.from(sse(MESSAGES_STREAM))],
      [responses, Buffer.from(sse(RESPONSES_STREAM))],
      [generateContent, Buffer.from(sse(GENERATE_STREAM.map((chunk) => [null, chunk])))],
    ];
    for (const [format, bytes] of cases) {
      const whole = await readAll(format, 'text/event-stream', bytes);
      expect(whole.length).toBe(1);
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 30 }),
          async (sizes) => {
            const tap = createUsageTap(format, 'text/event-stream', undefined)!;
            for (let i = 0, k = 0; i < bytes.length; k++) {
              const size = sizes[k % sizes.length];
              tap.write(bytes.subarray(i, i + size));
              i += size;
            }
            expect(await tap.finish()).toEqual(whole);
          },
        ),
        { numRuns: 150 },
      );
    }
  });

  test('the answer end read in any pieces is what the whole stream says', () => {
    const events = [
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: content_block_start\ndata: {"type":"content_block_start","index":1}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"text":"x"}}\n\n',
    ];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...events), { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 90 }), { minLength: 1, maxLength: 40 }),
        (sequence, sizes) => {
          const text = sequence.join('');
          const stop = text.lastIndexOf('"content_block_stop"');
          const start = text.lastIndexOf('"content_block_start"');
          const answer = AnswerEnd.of(messages)!;
          for (let i = 0, k = 0; i < text.length; k++) {
            const size = sizes[k % sizes.length];
            answer.feed(Buffer.from(text.slice(i, i + size)));
            i += size;
          }
          expect(answer.out).toBe(stop !== -1 && stop > start);
        },
      ),
      { numRuns: 400 },
    );
  });
});
