import Anthropic, { toFile as anthropicFile } from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { chargedMicros, fundedKey } from '../helpers/services';
import { freePort, startGateway, useGateway, VENDOR_KEYS, type RunningGateway } from '../helpers/gateway';
import { EMBEDDING, MockVendor, MESSAGE_JSON, sse, type MockHandler } from '../helpers/mock-vendor';
import { settled } from '../helpers/eventually';
import { mkdtemp, readFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type * as GenAI from '@google/genai' with { 'resolution-mode': 'import' };

// @google/genai ships ESM types in a "type": "module" package; its CommonJS build is what Node loads here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { GoogleGenAI, ApiError: GoogleApiError } = require('@google/genai') as typeof GenAI;
type GoogleApiError = GenAI.ApiError;

/** One succeeded line of Anthropic message batch results, of the priced model. */
const anthropicResult = (id: string, input: number, output: number) =>
  JSON.stringify({
    custom_id: id,
    result: {
      type: 'succeeded',
      message: {
        ...MESSAGE_JSON,
        model: 'claude-priced',
        usage: { input_tokens: input, output_tokens: output },
      },
    },
  });

/** The official SDKs pointed at Genway (base URL and key only), Genway pointed at a recording mock vendor. */
describe('LLM gateway with the official SDKs', () => {
  let vendor: MockVendor;
  let gw: RunningGateway;
  let key: string;
  let keyId: string;
  useGateway(
    {
      gateway: {
        prices: {
          'claude-priced': { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
          'gemini-priced': { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
          'gpt-priced': { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
          'whisper-priced': { inputPerMTokUsd: 3, outputPerMTokUsd: 15 },
          'claude-cache-priced': {
            inputPerMTokUsd: 3,
            outputPerMTokUsd: 15,
            cacheWritePerMTokUsd: 4,
            cacheWrite1hPerMTokUsd: 7,
          },
          'claude-search-priced': {
            inputPerMTokUsd: 3,
            outputPerMTokUsd: 15,
            toolCallUsd: { web_search: 0.025 },
          },
          'gemini-grounded-priced': {
            inputPerMTokUsd: 3,
            outputPerMTokUsd: 15,
            toolCallUsd: { grounded_prompt: 0.035 },
          },
          'gpt-tier-priced': {
            inputPerMTokUsd: 3,
            outputPerMTokUsd: 15,
            serviceTierFactor: { priority: 1.75 },
          },
          'claude-long-priced': {
            inputPerMTokUsd: 3,
            outputPerMTokUsd: 15,
            longContext: { aboveInputTokens: 200_000, inputPerMTokUsd: 6, outputPerMTokUsd: 22.5 },
          },
        },
      },
    },
    100,
    (s) => ({ vendor, gw, key, keyId } = s),
  );

  /** The Genway key never reaches the vendor, in any header or in the URL. */
  function expectNoGenwayKey(): void {
    const r = vendor.last();
    expect(r.rawHeaders.join('\n')).not.toContain(key);
    expect(r.url).not.toContain(key);
  }

  const anthropic = (options: { authToken?: boolean } = {}) =>
    new Anthropic({
      baseURL: gw.base,
      maxRetries: 0,
      ...(options.authToken ? { apiKey: null, authToken: key } : { apiKey: key }),
    });
  const openai = () => new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: key, maxRetries: 0 });
  const gemini = () => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.base } });

  describe('messages format (@anthropic-ai/sdk)', () => {
    test('non-streaming: the answer as the vendor sent it; the vendor sees its own key, the SDK’s version', async () => {
      const message = await anthropic().messages.create({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(message).toEqual(MESSAGE_JSON);
      const r = vendor.last();
      expect(r.method).toBe('POST');
      expect(r.url).toBe('/v1/messages');
      expect(VENDOR_KEYS.anthropic).toContain(r.headers['x-api-key']);
      expect(r.headers.authorization).toBeUndefined();
      // The SDK states its own API version; Genway keeps it (the default only fills in a missing one).
      expect(r.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(JSON.parse(r.body.toString())).toEqual({
        model: 'claude-test',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expectNoGenwayKey();
    });

    test('the key in Authorization: Bearer (authToken) works too, and is swapped the same way', async () => {
      await anthropic({ authToken: true }).messages.create({
        model: 'claude-test',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(VENDOR_KEYS.anthropic).toContain(vendor.last().headers['x-api-key']);
      expect(vendor.last().headers.authorization).toBeUndefined();
      expectNoGenwayKey();
    });

    test('streaming: every event arrives, and usage (input + cache, output) lands on the key', async () => {
      const stream = await anthropic().messages.create({
        model: 'claude-test',
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      const types: string[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
          text += event.delta.text;
      }
      expect(text).toBe('Hello there');
      expect(types).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect(
        await settled(() => gw.h.services.store.usage.get(keyId), {
          'claude-test': { requests: 1, input: 25, output: 7, cacheRead: 5, cacheWrite: 0, reasoning: 0 },
        }),
      ).toEqual({
        'claude-test': { requests: 1, input: 25, output: 7, cacheRead: 5, cacheWrite: 0, reasoning: 0 },
      });
    });

    test('the pool of vendor keys is used round robin', async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 4; i++) {
        await anthropic().messages.countTokens({
          model: 'claude-test',
          messages: [{ role: 'user', content: 'x' }],
        });
        seen.add(vendor.last().headers['x-api-key'] as string);
      }
      expect([...seen].sort()).toEqual([...VENDOR_KEYS.anthropic].sort());
    });

    test('Genway refusals raise the SDK’s own error classes', async () => {
      const bad = new Anthropic({ baseURL: gw.base, apiKey: `gwk_${'A'.repeat(43)}`, maxRetries: 0 });
      const call = (client: Anthropic, model = 'claude-test') =>
        client.messages.create({ model, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] });
      await expect(call(bad)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);

      const limited = await fundedKey(gw.h.services, 10, { models: ['claude-other'] });
      const restricted = new Anthropic({ baseURL: gw.base, apiKey: limited.key, maxRetries: 0 });
      const denied = await call(restricted).catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect((denied as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toEqual({
        type: 'error',
        error: { type: 'permission_error', message: 'This API key has no access to model claude-test' },
      });

      const slow = await fundedKey(gw.h.services, 10, { rateLimit: { ratePerSec: 0.01, burst: 1 } });
      const client = new Anthropic({ baseURL: gw.base, apiKey: slow.key, maxRetries: 0 });
      await call(client);
      const limitedErr = await call(client).catch((e: unknown) => e);
      expect(limitedErr).toBeInstanceOf(Anthropic.RateLimitError);
      expect((limitedErr as InstanceType<typeof Anthropic.RateLimitError>).headers.get('retry-after')).toBe(
        '100',
      );
    });

    test('a priced model is charged exactly, and an exhausted balance is a vendor-style 402', async () => {
      // 25 input + 5 cache-read tokens (priced as input) at 3 USD/MTok + 7 output at 15 USD/MTok = 90 + 105 = 195 micro-USD.
      const poor = await fundedKey(gw.h.services, 0.0002);
      const client = new Anthropic({ baseURL: gw.base, apiKey: poor.key, maxRetries: 0 });
      const stream = await client.messages.create({
        model: 'claude-priced',
        max_tokens: 8,
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      });
      for await (const _ of stream) void _;
      expect(await settled(() => gw.h.services.accounts.balanceUsd(poor.accountId), 0.000005)).toBe(0.000005);
      const ledger = await gw.h.services.accounts.ledger(poor.accountId);
      expect(ledger.map((e) => [e.kind, e.amountMicros])).toEqual([
        ['credit', 200],
        ['charge', 195],
      ]);

      // The next call takes what is left (5 micro-USD of 195); the one after is refused before the vendor.
      const again = await client.messages.create({
        model: 'claude-priced',
        max_tokens: 8,
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      });
      for await (const _ of again) void _;
      expect(await settled(() => gw.h.services.accounts.balanceUsd(poor.accountId), 0)).toBe(0);
      const before = vendor.received.length;
      const refused = await client.messages
        .create({ model: 'claude-priced', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Anthropic.APIError);
      expect((refused as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
      expect((refused as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'billing_error' },
      });
      expect(vendor.received.length).toBe(before);
    });

    test("cache writes kept an hour are priced apart from five-minute ones: by default at the vendor's rates (2x and 1.25x input), or as configured", async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new Anthropic({ baseURL: gw.base, apiKey: priced.key, maxRetries: 0 });
      const usage = {
        input_tokens: 10,
        cache_creation_input_tokens: 3000,
        cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
        cache_read_input_tokens: 0,
        output_tokens: 5,
      };
      const answer = (model: string) => (_r: unknown, res: http.ServerResponse) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ...MESSAGE_JSON, model, usage }));
      const ask = (model: string) =>
        client.messages.create({
          model,
          max_tokens: 8,
          system: [{ type: 'text', text: 'long context', cache_control: { type: 'ephemeral', ttl: '1h' } }],
          messages: [{ role: 'user', content: 'x' }],
        });
      const charges = chargedMicros(gw.h.services, priced.accountId);
      // 10 input at 3 + 1000 five-minute writes at 3.75 + 2000 hour-long writes at 6 + 5 output at 15 (USD/MTok):
      // 30 + 3750 + 12000 + 75 = 15855 micro-USD.
      vendor.next(answer('claude-priced'));
      expect((await ask('claude-priced')).usage.cache_creation?.ephemeral_1h_input_tokens).toBe(2000);
      expect(await settled(charges, [15855])).toEqual([15855]);
      // Configured: writes at 4, hour-long writes at 7: 30 + 4000 + 14000 + 75 = 18105.
      vendor.next(answer('claude-cache-priced'));
      await ask('claude-cache-priced');
      expect(await settled(charges, [15855, 18105])).toEqual([15855, 18105]);
      // The usage record counts every write once, whatever its price.
      const counted = { requests: 1, input: 10, output: 5, cacheRead: 0, cacheWrite: 3000, reasoning: 0 };
      const expected = { 'claude-priced': counted, 'claude-cache-priced': counted };
      expect(await settled(() => gw.h.services.store.usage.get(priced.keyId), expected)).toEqual(expected);
    });

    test('web searches the vendor ran are charged per search, at its rate (10 USD per 1,000) or the configured one', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new Anthropic({ baseURL: gw.base, apiKey: priced.key, maxRetries: 0 });
      const answer = (model: string) => (_r: unknown, res: http.ServerResponse) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            ...MESSAGE_JSON,
            model,
            usage: {
              input_tokens: 100,
              output_tokens: 50,
              server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 },
            },
          }),
        );
      const ask = (model: string) =>
        client.messages.create({
          model,
          max_tokens: 8,
          tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }],
          messages: [{ role: 'user', content: 'news?' }],
        });
      const charges = chargedMicros(gw.h.services, priced.accountId);
      // 100 input at 3 + 50 output at 15 (USD/MTok) + 2 searches at 0.01 USD: 300 + 750 + 20000 = 21050 micro-USD.
      vendor.next(answer('claude-priced'));
      await ask('claude-priced');
      expect(await settled(charges, [21050])).toEqual([21050]);
      // A model priced at 0.025 USD per search: 300 + 750 + 50000 = 51050.
      vendor.next(answer('claude-search-priced'));
      await ask('claude-search-priced');
      expect(await settled(charges, [21050, 51050])).toEqual([21050, 51050]);
    });

    test('a prompt past the long-context threshold (input, cache reads and writes together) puts the whole call at long-context prices', async () => {
      const priced = await fundedKey(gw.h.services, 5);
      const client = new Anthropic({ baseURL: gw.base, apiKey: priced.key, maxRetries: 0 });
      const answer = (cacheRead: number) => (_r: unknown, res: http.ServerResponse) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            ...MESSAGE_JSON,
            model: 'claude-long-priced',
            usage: { input_tokens: 150_000, cache_read_input_tokens: cacheRead, output_tokens: 100 },
          }),
        );
      const ask = () =>
        client.messages.create({
          model: 'claude-long-priced',
          max_tokens: 100,
          messages: [{ role: 'user', content: 'a long document' }],
        });
      const charges = chargedMicros(gw.h.services, priced.accountId);
      // 190,000 prompt tokens, at the threshold's side: 150,000 input and 40,000 cache reads at 3 + 100 output at 15
      // (USD/MTok): 450000 + 120000 + 1500 = 571500 micro-USD.
      vendor.next(answer(40_000));
      await ask();
      expect(await settled(charges, [571500])).toEqual([571500]);
      // 210,000: every token at long-context prices, 6 and 22.5: 900000 + 360000 + 2250 = 1262250.
      vendor.next(answer(60_000));
      await ask();
      expect(await settled(charges, [571500, 1262250])).toEqual([571500, 1262250]);
    });

    test('an upstream error passes through unchanged, status and body', async () => {
      const body = '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}';
      vendor.next((_r, res) => {
        res.writeHead(529, { 'content-type': 'application/json', 'x-should-retry': 'false' });
        res.end(body);
      });
      const err = await anthropic()
        .messages.create({ model: 'claude-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.APIError);
      expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
      expect((err as InstanceType<typeof Anthropic.APIError>).error).toEqual(JSON.parse(body));
    });

    test("vendor keys the vendor refuses (401): each tried once, then Genway's 502, which the SDK does not retry", async () => {
      const refusal =
        '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}';
      for (let i = 0; i < VENDOR_KEYS.anthropic.length; i++) {
        vendor.next((_r, res) => {
          res.writeHead(401, { 'content-type': 'application/json' });
          res.end(refusal);
        });
      }
      const before = vendor.received.length;
      // The SDK's own retries left on (2): Genway's x-should-retry: false is what stops them.
      const err = await new Anthropic({ baseURL: gw.base, apiKey: key }).messages
        .create({ model: 'claude-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.InternalServerError);
      const apiError = err as InstanceType<typeof Anthropic.APIError>;
      expect(apiError.status).toBe(502);
      expect(apiError.error).toMatchObject({ type: 'error', error: { type: 'api_error' } });
      expect(apiError.message).toMatch(/refused Genway's vendor key k-[0-9a-f]{12} \(HTTP 401\)/);
      expect(apiError.message).not.toContain('invalid x-api-key');
      const tried = vendor.received.slice(before).map((r) => r.headers['x-api-key']);
      expect([...tried].sort()).toEqual([...VENDOR_KEYS.anthropic].sort());
    });

    test('an error event mid-stream reaches the SDK as the vendor sent it', async () => {
      vendor.next((_r, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          sse([
            [
              'message_start',
              {
                type: 'message_start',
                message: {
                  id: 'm',
                  type: 'message',
                  role: 'assistant',
                  model: 'claude-test',
                  content: [],
                  usage: { input_tokens: 1, output_tokens: 0 },
                },
              },
            ],
            [
              'error',
              { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded mid-stream' } },
            ],
          ]),
        );
      });
      const stream = await anthropic().messages.create({
        model: 'claude-test',
        max_tokens: 8,
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      });
      const consume = async () => {
        for await (const _ of stream) void _;
      };
      await expect(consume()).rejects.toThrow('Overloaded mid-stream');
    });
  });

  describe('message batches (@anthropic-ai/sdk)', () => {
    test('results_url points back at Genway, so the SDK fetches results with the vendor key, and they are billed once', async () => {
      const batch = (status: string) => ({
        id: 'msgbatch_sdk1',
        type: 'message_batch',
        processing_status: status,
        request_counts: { processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 },
        created_at: '2026-11-25T00:00:00Z',
        ended_at: null,
        expires_at: '2026-11-26T00:00:00Z',
        archived_at: null,
        cancel_initiated_at: null,
        // Anthropic answers with its own absolute URL; the SDK calls it as it is.
        results_url: status === 'ended' ? `${vendor.url}/v1/messages/batches/msgbatch_sdk1/results` : null,
      });
      const json = (body: unknown) => (_r: unknown, res: import('node:http').ServerResponse) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const line = anthropicResult;
      const priced = await fundedKey(gw.h.services, 1);
      const client = new Anthropic({ baseURL: gw.base, apiKey: priced.key, maxRetries: 0 });

      vendor.next(json(batch('in_progress')));
      const created = await client.messages.batches.create({
        requests: [
          {
            custom_id: 'a',
            params: { model: 'claude-priced', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] },
          },
          {
            custom_id: 'b',
            params: { model: 'claude-priced', max_tokens: 8, messages: [{ role: 'user', content: 'y' }] },
          },
        ],
      });
      expect(created.id).toBe('msgbatch_sdk1');

      for (let read = 0; read < 2; read++) {
        vendor.next(json(batch('ended')));
        vendor.next((_r, res) =>
          res
            .writeHead(200, { 'content-type': 'application/binary' })
            .end(`${line('a', 1000, 100)}\n${line('b', 3000, 300)}\n`),
        );
        const seen: string[] = [];
        for await (const result of await client.messages.batches.results('msgbatch_sdk1'))
          seen.push(result.custom_id);
        expect(seen).toEqual(['a', 'b']);
        const fetched = vendor.last();
        expect(fetched.url).toBe('/v1/messages/batches/msgbatch_sdk1/results');
        expect(VENDOR_KEYS.anthropic).toContain(fetched.headers['x-api-key']);
        expect(JSON.stringify(fetched.headers)).not.toContain(priced.key);
      }
      // 4000 input at 3 USD/MTok + 400 output at 15 USD/MTok = 12000 + 6000 = 18000 micro-USD, at the batch
      // price (half): 9000, charged once however often the results are read.
      const charges = async () =>
        (await gw.h.services.accounts.ledger(priced.accountId))
          .filter((e) => e.kind === 'charge')
          .map((e) => [e.amountMicros, e.reference]);
      expect(await settled(charges, [[9000, 'llm-batch:anthropic:msgbatch_sdk1']])).toEqual([
        [9000, 'llm-batch:anthropic:msgbatch_sdk1'],
      ]);
    });
  });

  describe('batch results that no call reveals in full (@google/genai, openai)', () => {
    const json =
      (body: unknown): MockHandler =>
      (_r, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    /** One result of a Gemini batch: a generateContent answer of the priced model. */
    const geminiResult = (input: number, output: number) => ({
      candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
      usageMetadata: {
        promptTokenCount: input,
        candidatesTokenCount: output,
        totalTokenCount: input + output,
      },
      modelVersion: 'gemini-priced',
    });
    /** A Gemini batch operation, as `batches.get` reads it; `output` once done. */
    const geminiBatch = (name: string, output?: Record<string, unknown>) => ({
      name,
      metadata: {
        '@type': 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch',
        model: 'models/gemini-priced',
        displayName: 'sdk',
        state: output ? 'BATCH_STATE_SUCCEEDED' : 'BATCH_STATE_PENDING',
        ...(output ? { output } : {}),
      },
      ...(output
        ? {
            done: true,
            response: {
              '@type': 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput',
              ...output,
            },
          }
        : {}),
    });
    const chargesOf = (accountId: string) => async () =>
      (await gw.h.services.accounts.ledger(accountId))
        .filter((e) => e.kind === 'charge')
        .map((e) => [e.amountMicros, e.reference]);
    // 4000 input at 3 USD/MTok + 400 output at 15 USD/MTok = 12000 + 6000 = 18000 micro-USD; at the batch price
    // (half), 9000.

    test('gemini: inline results, in both places the vendor puts them, are billed once at the batch price however often the batch is read', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new GoogleGenAI({ apiKey: priced.key, httpOptions: { baseUrl: gw.base } });
      vendor.next(json(geminiBatch('batches/inline1')));
      const created = await client.batches.create({
        model: 'gemini-priced',
        src: [
          { contents: [{ role: 'user', parts: [{ text: 'a' }] }] },
          { contents: [{ role: 'user', parts: [{ text: 'b' }] }] },
        ],
      });
      expect(created.name).toBe('batches/inline1');
      expect(vendor.last().url).toBe('/v1beta/models/gemini-priced:batchGenerateContent');
      const output = {
        inlinedResponses: {
          inlinedResponses: [
            { response: geminiResult(1000, 100), metadata: { key: 'a' } },
            { response: geminiResult(3000, 300), metadata: { key: 'b' } },
          ],
        },
      };
      for (let read = 0; read < 2; read++) {
        vendor.next(json(geminiBatch('batches/inline1', output)));
        const done = await client.batches.get({ name: 'batches/inline1' });
        expect(done.state).toBe('JOB_STATE_SUCCEEDED');
        expect(done.dest?.inlinedResponses?.map((r) => r.response?.usageMetadata?.promptTokenCount)).toEqual([
          1000, 3000,
        ]);
      }
      expect(
        await settled(chargesOf(priced.accountId), [[9000, 'llm-batch:gemini:batches/inline1']]),
      ).toEqual([[9000, 'llm-batch:gemini:batches/inline1']]);
    });

    test("gemini: a batch's results file, revealed by the batch, is billed once however often or however it is downloaded", async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new GoogleGenAI({ apiKey: priced.key, httpOptions: { baseUrl: gw.base } });
      vendor.next(json(geminiBatch('batches/file1')));
      await client.batches.create({ model: 'gemini-priced', src: 'files/in-sdk' });
      vendor.next(json(geminiBatch('batches/file1', { responsesFile: 'files/out-sdk' })));
      expect((await client.batches.get({ name: 'batches/file1' })).dest?.fileName).toBe('files/out-sdk');
      const lines = [
        { key: 'a', response: geminiResult(1000, 100) },
        { key: 'b', response: geminiResult(3000, 300) },
      ]
        .map((l) => `${JSON.stringify(l)}\n`)
        .join('');
      const dir = await mkdtemp(path.join(tmpdir(), 'genway-batch-'));
      for (let read = 0; read < 2; read++) {
        vendor.next((_r, res) =>
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(lines),
        );
        const downloadPath = path.join(dir, `out-${read}.jsonl`);
        await client.files.download({ file: 'files/out-sdk', downloadPath });
        expect(await readFile(downloadPath, 'utf8')).toBe(lines);
        expect(vendor.last().url).toBe('/v1beta/files/out-sdk:download?alt=media');
      }
      // The REST path the vendor's guide downloads from.
      vendor.next((_r, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(lines));
      const rest = await fetch(`${gw.base}/download/v1beta/files/out-sdk:download?alt=media`, {
        headers: { 'x-goog-api-key': priced.key },
      });
      expect(await rest.text()).toBe(lines);
      expect(vendor.last().headers['x-goog-api-key']).toBe(VENDOR_KEYS.gemini[0]);
      expect(await settled(chargesOf(priced.accountId), [[9000, 'llm-batch:gemini:files/out-sdk']])).toEqual([
        [9000, 'llm-batch:gemini:files/out-sdk'],
      ]);
    });

    test('openai: an output file Genway never saw revealed (its id taken from a list) is billed once to the account that reads it; a file the account uploaded is not', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: priced.key, maxRetries: 0 });
      const line = (id: string, input: number, output: number) =>
        JSON.stringify({
          id: `batch_req_${id}`,
          custom_id: id,
          response: {
            status_code: 200,
            request_id: `req_${id}`,
            body: {
              object: 'chat.completion',
              model: 'gpt-priced-2025-01-01',
              usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
            },
          },
          error: null,
        });
      const lines = `${line('a', 1000, 100)}\n${line('b', 3000, 300)}\n`;
      vendor.next(
        json({
          object: 'list',
          data: [{ id: 'batch_listed', object: 'batch', output_file_id: 'file-listed' }],
          has_more: false,
        }),
      );
      const listed = await client.batches.list();
      expect(listed.data.map((b) => b.output_file_id)).toEqual(['file-listed']);
      for (let read = 0; read < 2; read++) {
        vendor.next((_r, res) =>
          res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(lines),
        );
        expect(await (await client.files.content('file-listed')).text()).toBe(lines);
      }
      // A file uploaded through Genway is the account's own data, whatever it holds.
      vendor.next(
        json({
          id: 'file-own',
          object: 'file',
          bytes: lines.length,
          created_at: 1,
          filename: 'own.jsonl',
          purpose: 'batch',
        }),
      );
      await client.files.create({ file: await toFile(Buffer.from(lines), 'own.jsonl'), purpose: 'batch' });
      vendor.next((_r, res) => res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(lines));
      expect(await (await client.files.content('file-own')).text()).toBe(lines);
      expect(await settled(chargesOf(priced.accountId), [[9000, 'llm-batch:openai:file-listed']])).toEqual([
        [9000, 'llm-batch:openai:file-listed'],
      ]);
    });

    /** Anthropic message batch results: two succeeded results of the priced model (9000 micro-USD at the batch price). */
    const anthropicResults = `${anthropicResult('r0', 1000, 100)}\n${anthropicResult('r1', 3000, 300)}\n`;

    test("batch results are asked for whole: the client's Range goes no further, so a slice cannot be read before the whole is billed", async () => {
      const priced = await fundedKey(gw.h.services, 1);
      vendor.next((_r, res) =>
        res.writeHead(200, { 'content-type': 'application/binary' }).end(anthropicResults),
      );
      const res = await fetch(`${gw.base}/v1/messages/batches/msgbatch_range/results`, {
        headers: {
          'x-api-key': priced.key,
          'anthropic-version': '2023-06-01',
          range: 'bytes=0-99',
          'if-range': '"etag"',
        },
      });
      expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: anthropicResults });
      const sent = vendor.last().headers;
      expect([sent.range, sent['if-range']]).toEqual([undefined, undefined]);
      expect(
        await settled(chargesOf(priced.accountId), [[9000, 'llm-batch:anthropic:msgbatch_range']]),
      ).toEqual([[9000, 'llm-batch:anthropic:msgbatch_range']]);
    });

    test('batch results a client stops reading before their end are still read to the end, and billed', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const [first, ...rest] = anthropicResults.split('\n');
      let finished = false;
      vendor.next((_r, res) => {
        res.writeHead(200, { 'content-type': 'application/binary' });
        res.write(`${first}\n`);
        // The rest comes once the client has gone: Genway reads it anyway.
        setTimeout(() => {
          res.end(rest.join('\n'), () => (finished = true));
        }, 300);
      });
      await new Promise<void>((resolve, reject) => {
        const req = http.get(
          `${gw.base}/v1/messages/batches/msgbatch_left/results`,
          { headers: { 'x-api-key': priced.key, 'anthropic-version': '2023-06-01' } },
          (res) => {
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          },
        );
        req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      });
      expect(
        await settled(chargesOf(priced.accountId), [[9000, 'llm-batch:anthropic:msgbatch_left']]),
      ).toEqual([[9000, 'llm-batch:anthropic:msgbatch_left']]);
      expect(finished).toBe(true);
    });

    test('batch results a client stopped reading, then left, are read to the end too (its backpressure no longer holds the vendor)', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      // Megabytes ahead of the results (an errored result with a long message): more than the sockets hold.
      const padding = JSON.stringify({
        custom_id: 'pad',
        result: { type: 'errored', error: { type: 'error', message: 'x'.repeat(8 << 20) } },
      });
      vendor.next((_r, res) =>
        res.writeHead(200, { 'content-type': 'application/binary' }).end(`${padding}\n${anthropicResults}`),
      );
      await new Promise<void>((resolve) => {
        const req = http.get(
          `${gw.base}/v1/messages/batches/msgbatch_stalled/results`,
          { headers: { 'x-api-key': priced.key, 'anthropic-version': '2023-06-01' } },
          (res) => {
            res.pause(); // reads nothing: Genway's writes to it back up, and it holds the vendor back
            setTimeout(() => {
              req.destroy();
              resolve();
            }, 300);
          },
        );
        req.on('error', () => undefined);
      });
      expect(
        await settled(chargesOf(priced.accountId), [[9000, 'llm-batch:anthropic:msgbatch_stalled']]),
      ).toEqual([[9000, 'llm-batch:anthropic:msgbatch_stalled']]);
    });

    test('a path no route names (through a vendor mount) is refused for a priced model, which it would run unmetered', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const before = vendor.received.length;
      const call = async (path: string, headers: Record<string, string>, body: unknown) => {
        const res = await fetch(`${gw.base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: await res.json() };
      };
      const bearer = { authorization: `Bearer ${priced.key}` };
      expect(await call('/openai/v1/videos', bearer, { model: 'gpt-priced', prompt: 'x' })).toEqual({
        status: 403,
        body: {
          error: {
            message:
              'POST /v1/videos is not a route Genway meters, and it names the priced model gpt-priced: priced models run only on metered routes',
            type: 'invalid_request_error',
            param: null,
            code: 'model_not_found',
          },
        },
      });
      const google = { 'x-goog-api-key': priced.key };
      expect(
        (await call('/gemini/v1beta/models/gemini-priced:futureAction', google, { contents: [] })).status,
      ).toBe(403);
      expect(vendor.received.length).toBe(before);
      // An unpriced model on the same paths passes through as before.
      vendor.next(json({ id: 'video_1' }));
      expect(await call('/openai/v1/videos', bearer, { model: 'free-video', prompt: 'x' })).toEqual({
        status: 200,
        body: { id: 'video_1' },
      });
      expect(vendor.last().url).toBe('/v1/videos');
    });

    test('a route whose answer carries no token usage refuses a priced model, which it would run unbilled', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const before = vendor.received.length;
      const speech = (model: string) =>
        fetch(`${gw.base}/v1/audio/speech`, {
          method: 'POST',
          headers: { authorization: `Bearer ${priced.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, input: 'hello', voice: 'alloy' }),
        });
      const refused = await speech('gpt-priced');
      expect({ status: refused.status, body: await refused.json() }).toEqual({
        status: 403,
        body: {
          error: {
            message:
              'POST /v1/audio/speech: speech answers with audio, no usage, so the priced model gpt-priced would run unbilled: priced models run only on metered routes',
            type: 'invalid_request_error',
            param: null,
            code: 'model_not_found',
          },
        },
      });
      // Gemini embeddings are counted, with no tokens to price: a priced model is refused there too.
      const embed = await gemini()
        .models.embedContent({ model: 'gemini-priced', contents: 'x' })
        .catch((e: unknown) => e);
      expect(embed).toBeInstanceOf(GoogleApiError);
      expect((embed as GoogleApiError).status).toBe(403);
      expect(vendor.received.length).toBe(before);
      // An unpriced model passes as before.
      vendor.next((_r, res) => res.writeHead(200, { 'content-type': 'audio/mpeg' }).end('mp3'));
      expect(await (await speech('tts-free')).text()).toBe('mp3');
    });

    test('openai: reading a batch Genway never saw made records nothing, so the reader does not take it (or its output file) from the account that made it', async () => {
      const reader = await fundedKey(gw.h.services, 1);
      const maker = await fundedKey(gw.h.services, 1);
      const batch = {
        id: 'batch_unseen',
        object: 'batch',
        status: 'completed',
        output_file_id: 'file-unseen-out',
      };
      for (const k of [reader, maker]) {
        vendor.next(json(batch));
        const client = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: k.key, maxRetries: 0 });
        expect((await client.batches.retrieve('batch_unseen')).output_file_id).toBe('file-unseen-out');
      }
      const records = await gw.h.services.store.vendorObjects.recall('openai', [
        'batch_unseen',
        'file-unseen-out',
      ]);
      expect(records).toEqual([null, null]);
    });
  });

  describe('responses format (openai)', () => {
    test('non-streaming: the response object as sent; the vendor sees Bearer <vendor key>', async () => {
      const response = await openai().responses.create({ model: 'gpt-test', input: 'Hi' });
      expect(response.output_text).toBe('Hello there');
      expect(response.usage?.total_tokens).toBe(51);
      const r = vendor.last();
      expect(r.url).toBe('/v1/responses');
      expect(r.headers.authorization).toBe(`Bearer ${VENDOR_KEYS.openai[0]}`);
      expect(r.headers['x-api-key']).toBeUndefined();
      expectNoGenwayKey();
      expect(
        await settled(() => gw.h.services.store.usage.get(keyId), {
          'gpt-test': { requests: 1, input: 32, output: 9, cacheRead: 8, cacheWrite: 0, reasoning: 2 },
        }),
      ).toEqual({
        'gpt-test': { requests: 1, input: 32, output: 9, cacheRead: 8, cacheWrite: 0, reasoning: 2 },
      });
    });

    test('streaming: events in order, usage from response.completed', async () => {
      const stream = await openai().responses.create({ model: 'gpt-test', input: 'Hi', stream: true });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).toEqual([
        'response.created',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.completed',
      ]);
      expect(
        await settled(async () => (await gw.h.services.store.usage.get(keyId))['gpt-test']?.output, 9),
      ).toBe(9); // 11 output tokens, 2 of them reasoning (counted apart)
    });

    test('web and file searches the vendor ran are charged per call, JSON and streamed; a call without such tools is read as before', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: priced.key, maxRetries: 0 });
      const response = {
        id: 'resp_search',
        object: 'response',
        status: 'completed',
        model: 'gpt-priced',
        output: [
          {
            type: 'web_search_call',
            id: 'ws_1',
            status: 'completed',
            action: { type: 'search', query: 'q' },
          },
          { type: 'file_search_call', id: 'fs_1', status: 'completed', queries: ['q'], results: null },
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'found', annotations: [] }],
          },
        ],
        usage: { input_tokens: 100, output_tokens: 50, total_tokens: 150 },
      };
      const charges = chargedMicros(gw.h.services, priced.accountId);
      const tools = [
        { type: 'web_search' as const },
        { type: 'file_search' as const, vector_store_ids: ['vs_1'] },
      ];
      // 100 input at 3 + 50 output at 15 (USD/MTok) + a web search at 0.01 + a file search at 0.0025 USD:
      // 300 + 750 + 10000 + 2500 = 13550 micro-USD.
      vendor.next((_r, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response)),
      );
      const json = await client.responses.create({ model: 'gpt-priced', input: 'news?', tools });
      expect(json.output_text).toBe('found');
      expect(await settled(charges, [13550])).toEqual([13550]);
      vendor.next((_r, res) =>
        res
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(sse([['response.completed', { type: 'response.completed', sequence_number: 0, response }]])),
      );
      const stream = await client.responses.create({
        model: 'gpt-priced',
        input: 'news?',
        tools,
        stream: true,
      });
      for await (const _ of stream) void _;
      expect(await settled(charges, [13550, 13550])).toEqual([13550, 13550]);
      // A stored prompt may carry the tools: a call naming one is read whole too.
      vendor.next((_r, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response)),
      );
      await client.responses.create({ model: 'gpt-priced', prompt: { id: 'pmpt_search', version: '2' } });
      expect(await settled(charges, [13550, 13550, 13550])).toEqual([13550, 13550, 13550]);
    });

    test("service tiers: the tier the answer reports prices the tokens (flex at half, priority at the model's factor); a tier with no price is refused before it runs", async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: priced.key, maxRetries: 0 });
      const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
      const completion = (model: string, tier: string | undefined) => ({
        id: 'chatcmpl-tier',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage,
        ...(tier ? { service_tier: tier } : {}),
      });
      const json = (body: unknown) => (_r: unknown, res: http.ServerResponse) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const charges = chargedMicros(gw.h.services, priced.accountId);
      const chat = (model: string, tier: 'flex' | 'priority' | 'auto') =>
        client.chat.completions.create({
          model,
          service_tier: tier,
          messages: [{ role: 'user', content: 'x' }],
        });
      // 1000 input at 3 + 100 output at 15 (USD/MTok) = 4500 micro-USD at the plain prices.
      vendor.next(json(completion('gpt-priced', 'flex')));
      await chat('gpt-priced', 'flex');
      expect(await settled(charges, [2250])).toEqual([2250]);
      // Priority, streamed, on a model priced for it: 4500 x 1.75.
      vendor.next((_r, res) =>
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(
          sse([
            [
              null,
              { ...completion('gpt-tier-priced', 'priority'), object: 'chat.completion.chunk', usage: null },
            ],
            [
              null,
              { ...completion('gpt-tier-priced', 'priority'), object: 'chat.completion.chunk', choices: [] },
            ],
          ]),
        ),
      );
      const stream = await client.chat.completions.create({
        model: 'gpt-tier-priced',
        service_tier: 'priority',
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      });
      for await (const _ of stream) void _;
      expect(await settled(charges, [2250, 7875])).toEqual([2250, 7875]);
      // Asked priority, run at default (the vendor's downgrade): the plain prices. Asked flex of a back end that does
      // not report a tier: the plain prices too, never a tier the answer does not confirm.
      vendor.next(json(completion('gpt-tier-priced', 'default')));
      await chat('gpt-tier-priced', 'priority');
      vendor.next(json(completion('gpt-priced', undefined)));
      await chat('gpt-priced', 'flex');
      expect(await settled(charges, [2250, 7875, 4500, 4500])).toEqual([2250, 7875, 4500, 4500]);
      // Responses, JSON: the top-level tier, read whole; a client's own key named service_tier (metadata, a tool's
      // schema) after it changes nothing.
      vendor.next(
        json({
          id: 'resp_tier',
          object: 'response',
          status: 'completed',
          model: 'gpt-priced',
          output: [],
          service_tier: 'flex',
          tools: [
            { type: 'function', name: 'f', parameters: { properties: { service_tier: { type: 'string' } } } },
          ],
          usage: { input_tokens: 1000, output_tokens: 100, total_tokens: 1100 },
          metadata: { service_tier: 'default' },
        }),
      );
      await client.responses.create({
        model: 'gpt-priced',
        input: 'x',
        service_tier: 'flex',
        metadata: { service_tier: 'default' },
      });
      expect(await settled(charges, [2250, 7875, 4500, 4500, 2250])).toEqual([2250, 7875, 4500, 4500, 2250]);
      // Priority on a model with no price for it: refused before the vendor, nothing charged.
      const before = vendor.received.length;
      const refused = await chat('gpt-priced', 'priority').catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect((refused as InstanceType<typeof OpenAI.PermissionDeniedError>).error).toMatchObject({
        message:
          'service_tier: "priority" has no price for this model (its serviceTierFactor.priority), so it would run at that tier\'s rates and be charged the plain ones: ask for "auto" or "default", or leave it out',
      });
      expect(vendor.received.length).toBe(before);
      expect(await charges()).toEqual([2250, 7875, 4500, 4500, 2250]);
    });

    test('retrieve, cancel, delete and input items reach the vendor path unchanged', async () => {
      const client = openai();
      await client.responses.retrieve('resp_elsewhere');
      expect(vendor.last()).toMatchObject({ method: 'GET', url: '/v1/responses/resp_elsewhere' });
      vendor.next((_r, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"id":"resp_elsewhere","object":"response","status":"cancelled"}'),
      );
      await client.responses.cancel('resp_elsewhere');
      expect(vendor.last()).toMatchObject({ method: 'POST', url: '/v1/responses/resp_elsewhere/cancel' });
      vendor.next((_r, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"data":[],"object":"list","has_more":false}'),
      );
      await client.responses.inputItems.list('resp_elsewhere');
      expect(vendor.last()).toMatchObject({ method: 'GET' });
      expect(vendor.last().url.split('?')[0]).toBe('/v1/responses/resp_elsewhere/input_items');
      vendor.next((_r, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"id":"resp_elsewhere","object":"response.deleted","deleted":true}'),
      );
      await client.responses.delete('resp_elsewhere');
      expect(vendor.last()).toMatchObject({ method: 'DELETE', url: '/v1/responses/resp_elsewhere' });
    });

    test('chat completions (JSON): the answer as sent; cached prompt and reasoning tokens metered apart', async () => {
      const completion = await openai().chat.completions.create({
        model: 'gpt-chat',
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(completion.choices[0].message.content).toBe('Hello there');
      expect(completion._request_id).toBeNull(); // the mock sends no x-request-id; Genway's own is apart
      expect(vendor.last().url).toBe('/v1/chat/completions');
      const expected = {
        'gpt-chat': { requests: 1, input: 16, output: 5, cacheRead: 4, cacheWrite: 0, reasoning: 1 },
      };
      expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
    });

    test('a chat stream without include_usage is metered all the same, and the client sees no extra chunk', async () => {
      const stream = await openai().chat.completions.create({
        model: 'gpt-chat',
        stream: true,
        messages: [{ role: 'user', content: 'Hi' }],
      });
      const chunks: { choices: unknown[]; usage?: unknown }[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      // Genway asked the vendor for usage, then took the usage-only chunk out: every chunk has a choice.
      expect(chunks).toHaveLength(4);
      expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
      const sent = JSON.parse(vendor.last().body.toString()) as { stream_options?: unknown };
      expect(sent.stream_options).toEqual({ include_usage: true });
      const expected = {
        'gpt-chat': { requests: 1, input: 16, output: 5, cacheRead: 4, cacheWrite: 0, reasoning: 1 },
      };
      expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
    });

    test('a chat stream that asks for usage gets it, unchanged', async () => {
      const stream = await openai().chat.completions.create({
        model: 'gpt-chat',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'Hi' }],
      });
      const chunks: { choices: unknown[]; usage?: { prompt_tokens: number } | null }[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks).toHaveLength(5);
      expect(chunks[4].choices).toEqual([]);
      expect(chunks[4].usage?.prompt_tokens).toBe(20);
    });

    test('an audio upload passes byte for byte; a key with an allow-list is checked against its form model', async () => {
      const audio = Buffer.alloc(64 << 10, 7);
      const transcribe = (client: OpenAI, model: string) => {
        vendor.next((_r, res) =>
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"hello"}'),
        );
        return client.audio.transcriptions.create({
          file: new File([audio], 'a.wav', { type: 'audio/wav' }),
          model,
        });
      };
      expect((await transcribe(openai(), 'whisper-test')).text).toBe('hello');
      const received = vendor.last();
      expect(received.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      expect(received.body.includes(audio)).toBe(true);

      const limited = await fundedKey(gw.h.services, 10, { models: ['whisper-test'] });
      const restricted = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: limited.key, maxRetries: 0 });
      expect((await transcribe(restricted, 'whisper-test')).text).toBe('hello');
      const before = vendor.received.length;
      await expect(
        restricted.audio.transcriptions.create({ file: new File([audio], 'a.wav'), model: 'whisper-other' }),
      ).rejects.toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(vendor.received.length).toBe(before);
    });

    test('transcriptions by token are metered, JSON and streamed, at the exact price; a priced call that would answer without token usage is refused', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: priced.key, maxRetries: 0 });
      const audio = new File([Buffer.alloc(4096, 3)], 'a.wav', { type: 'audio/wav' });
      const tokens = (input: number, output: number) => ({
        type: 'tokens',
        input_tokens: input,
        input_token_details: { text_tokens: 0, audio_tokens: input },
        output_tokens: output,
        total_tokens: input + output,
      });
      const charges = chargedMicros(gw.h.services, priced.accountId);

      // JSON: 14 input at 3 USD/MTok + 45 output at 15 USD/MTok = 42 + 675 = 717 micro-USD.
      vendor.next((_r, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ text: 'hello', usage: tokens(14, 45) })),
      );
      const text = await client.audio.transcriptions.create({ file: audio, model: 'gpt-priced' });
      expect(text.text).toBe('hello');
      expect(await settled(charges, [717])).toEqual([717]);

      // Streamed: the usage is on transcript.text.done. 20 input + 10 output = 60 + 150 = 210 micro-USD.
      vendor.next((_r, res) =>
        res.writeHead(200, { 'content-type': 'text/event-stream' }).end(
          sse([
            [null, { type: 'transcript.text.delta', delta: 'hel' }],
            [null, { type: 'transcript.text.delta', delta: 'lo' }],
            [null, { type: 'transcript.text.done', text: 'hello', usage: tokens(20, 10) }],
          ]),
        ),
      );
      const stream = await client.audio.transcriptions.create({
        file: audio,
        model: 'gpt-priced',
        response_format: 'json',
        stream: true,
      });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      expect(types).toEqual(['transcript.text.delta', 'transcript.text.delta', 'transcript.text.done']);
      expect(await settled(charges, [717, 210])).toEqual([717, 210]);

      // Formats that carry no usage, whisper (which reports seconds), and a response_format given twice are refused
      // before the vendor; nothing is charged.
      const before = vendor.received.length;
      const textFormat = await client.audio.transcriptions
        .create({ file: audio, model: 'gpt-priced', response_format: 'text' })
        .catch((e: unknown) => e);
      expect(textFormat).toBeInstanceOf(OpenAI.BadRequestError);
      expect((textFormat as InstanceType<typeof OpenAI.BadRequestError>).error).toEqual({
        message:
          'response_format: "text" answers without token usage, which a priced model needs (Genway bills from it): use "json" or "diarized_json", or leave it out',
        type: 'invalid_request_error',
        param: null,
        code: null,
      });
      const whisper = await client.audio.transcriptions
        .create({ file: audio, model: 'whisper-priced' })
        .catch((e: unknown) => e);
      expect(whisper).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect((whisper as InstanceType<typeof OpenAI.PermissionDeniedError>).message).toBe(
        '403 POST /v1/audio/transcriptions: whisper models report audio seconds, not tokens, so the priced model whisper-priced would run unbilled: priced models run only on metered routes',
      );
      const twice = new FormData();
      twice.append('model', 'gpt-priced');
      twice.append('response_format', 'json');
      twice.append('response_format', 'text');
      twice.append('file', audio);
      const repeated = await fetch(`${gw.base}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${priced.key}` },
        body: twice,
      });
      expect(repeated.status).toBe(400);
      expect(((await repeated.json()) as { error: { message: string } }).error.message).toBe(
        'response_format: given 2 times in the form; a vendor runs the first or the last, so it must be given once',
      );
      expect(vendor.received.length).toBe(before);
      expect(await charges()).toEqual([717, 210]);

      // An unpriced model takes any format, as before, and nothing about its format is refused.
      vendor.next((_r, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello\n'));
      const free = await client.audio.transcriptions.create({
        file: audio,
        model: 'whisper-test',
        response_format: 'text',
      });
      expect(free).toBe('hello\n');
      twice.set('model', 'whisper-test');
      vendor.next((_r, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"hello"}'),
      );
      const unpriced = await fetch(`${gw.base}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${priced.key}` },
        body: twice,
      });
      expect(unpriced.status).toBe(200);
      expect(vendor.received.length).toBe(before + 2);
    });

    test('GET /v1/models goes to the responses vendor without the messages headers', async () => {
      const page = await openai().models.list();
      expect(page.data.map((m) => m.id)).toEqual(['model-a']);
      expect(vendor.last().headers.authorization).toBe(`Bearer ${VENDOR_KEYS.openai[0]}`);
    });

    test('Genway refusals raise the SDK’s own error classes', async () => {
      const bad = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: `gwk_${'B'.repeat(43)}`, maxRetries: 0 });
      const err = await bad.responses.create({ model: 'gpt-test', input: 'x' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect((err as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');

      const limited = await fundedKey(gw.h.services, 10, { models: ['gpt-other'] });
      const restricted = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: limited.key, maxRetries: 0 });
      await expect(restricted.responses.create({ model: 'gpt-test', input: 'x' })).rejects.toBeInstanceOf(
        OpenAI.PermissionDeniedError,
      );
      const slow = await fundedKey(gw.h.services, 10, { rateLimit: { ratePerSec: 0.01, burst: 1 } });
      const client = new OpenAI({ baseURL: `${gw.base}/v1`, apiKey: slow.key, maxRetries: 0 });
      await client.responses.create({ model: 'gpt-test', input: 'x' });
      await expect(client.responses.create({ model: 'gpt-test', input: 'x' })).rejects.toBeInstanceOf(
        OpenAI.RateLimitError,
      );
    });
  });

  describe('generate-content format (@google/genai)', () => {
    test('generateContent: the key travels in x-goog-api-key, never in the URL', async () => {
      const result = await gemini().models.generateContent({ model: 'gemini-test', contents: 'Hi' });
      expect(result.text).toBe('Hello there');
      const r = vendor.last();
      expect(r.url).toBe('/v1beta/models/gemini-test:generateContent');
      expect(r.headers['x-goog-api-key']).toBe(VENDOR_KEYS.gemini[0]);
      expectNoGenwayKey();
      expect(
        await settled(() => gw.h.services.store.usage.get(keyId), {
          'gemini-test': { requests: 1, input: 9, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: 3 },
        }),
      ).toEqual({
        'gemini-test': { requests: 1, input: 9, output: 4, cacheRead: 0, cacheWrite: 0, reasoning: 3 },
      });
    });

    test('grounding with Google Search is charged per grounded prompt where the model is priced for it, JSON and streamed', async () => {
      const priced = await fundedKey(gw.h.services, 1);
      const client = new GoogleGenAI({ apiKey: priced.key, httpOptions: { baseUrl: gw.base } });
      const answer = (model: string) => ({
        candidates: [
          {
            content: { role: 'model', parts: [{ text: 'found' }] },
            finishReason: 'STOP',
            index: 0,
            groundingMetadata: {
              webSearchQueries: ['a', 'b'],
              searchEntryPoint: { renderedContent: '<div/>' },
            },
          },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        modelVersion: model,
      });
      const charges = chargedMicros(gw.h.services, priced.accountId);
      const config = { tools: [{ googleSearch: {} }] };
      // 10 input at 3 + 5 output at 15 (USD/MTok) + one grounded prompt at 0.035 USD: 30 + 75 + 35000 = 35105.
      vendor.next((_r, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(answer('gemini-grounded-priced'))),
      );
      const result = await client.models.generateContent({
        model: 'gemini-grounded-priced',
        contents: 'news?',
        config,
      });
      expect(result.text).toBe('found');
      expect(await settled(charges, [35105])).toEqual([35105]);
      vendor.next((_r, res) =>
        res
          .writeHead(200, { 'content-type': 'text/event-stream' })
          .end(sse([[null, answer('gemini-grounded-priced')]])),
      );
      const stream = await client.models.generateContentStream({
        model: 'gemini-grounded-priced',
        contents: 'news?',
        config,
      });
      for await (const _ of stream) void _;
      expect(await settled(charges, [35105, 35105])).toEqual([35105, 35105]);
      // A model with no price for grounding (Google's free allowance): its tokens only.
      vendor.next((_r, res) =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(answer('gemini-priced'))),
      );
      await client.models.generateContent({ model: 'gemini-priced', contents: 'news?', config });
      expect(await settled(charges, [35105, 35105, 105])).toEqual([35105, 35105, 105]);
    });

    test('generateContentStream (alt=sse): chunks in order, usage from the last usageMetadata', async () => {
      const stream = await gemini().models.generateContentStream({ model: 'gemini-test', contents: 'Hi' });
      let text = '';
      for await (const chunk of stream) text += chunk.text ?? '';
      expect(text).toBe('Hello there');
      expect(vendor.last().url).toBe('/v1beta/models/gemini-test:streamGenerateContent?alt=sse');
      expect(
        await settled(async () => (await gw.h.services.store.usage.get(keyId))['gemini-test'], {
          requests: 1,
          input: 9,
          output: 5,
          cacheRead: 0,
          cacheWrite: 0,
          reasoning: 0,
        }),
      ).toEqual({
        requests: 1,
        input: 9,
        output: 5,
        cacheRead: 0,
        cacheWrite: 0,
        reasoning: 0,
      });
    });

    test('countTokens passes through and is not metered', async () => {
      const counted = await gemini().models.countTokens({ model: 'gemini-test', contents: 'Hi' });
      expect(counted.totalTokens).toBe(9);
      expect(vendor.last().url).toBe('/v1beta/models/gemini-test:countTokens');
      expect(await gw.h.services.store.usage.get(keyId)).toEqual({});
    });

    test('Genway refusals raise the SDK’s ApiError with the vendor status', async () => {
      const bad = new GoogleGenAI({ apiKey: `gwk_${'C'.repeat(43)}`, httpOptions: { baseUrl: gw.base } });
      const err = await bad.models
        .generateContent({ model: 'gemini-test', contents: 'x' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(GoogleApiError);
      expect((err as GoogleApiError).status).toBe(401);
      expect((err as GoogleApiError).message).toContain('UNAUTHENTICATED');

      const limited = await fundedKey(gw.h.services, 10, { models: ['gemini-other'] });
      const restricted = new GoogleGenAI({ apiKey: limited.key, httpOptions: { baseUrl: gw.base } });
      const denied = await restricted.models
        .generateContent({ model: 'gemini-test', contents: 'x' })
        .catch((e: unknown) => e);
      expect(denied).toBeInstanceOf(GoogleApiError);
      expect((denied as GoogleApiError).status).toBe(403);
    });
  });

  test('an unreachable vendor is the 5xx error class of each SDK', async () => {
    const down = await startGateway(`http://127.0.0.1:${await freePort()}`);
    try {
      const { key: k } = await fundedKey(down.h.services);
      const a = new Anthropic({ baseURL: down.base, apiKey: k, maxRetries: 0 });
      const o = new OpenAI({ baseURL: `${down.base}/v1`, apiKey: k, maxRetries: 0 });
      const g = new GoogleGenAI({ apiKey: k, httpOptions: { baseUrl: down.base } });
      const ae = await a.messages
        .create({ model: 'claude-test', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(ae).toBeInstanceOf(Anthropic.InternalServerError);
      expect((ae as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
      const oe = await o.responses.create({ model: 'gpt-test', input: 'x' }).catch((e: unknown) => e);
      expect(oe).toBeInstanceOf(OpenAI.InternalServerError);
      expect((oe as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      const ge = await g.models
        .generateContent({ model: 'gemini-test', contents: 'x' })
        .catch((e: unknown) => e);
      expect(ge).toBeInstanceOf(GoogleApiError);
      expect((ge as GoogleApiError).status).toBe(502);
    } finally {
      await down.close();
    }
  });

  describe('the rest of each SDK: embeddings, files, batches, models, caches, resumable uploads', () => {
    const answer =
      (status: number, body: unknown, headers: Record<string, string> = {}): MockHandler =>
      (_req, res) => {
        const text = typeof body === 'string' ? body : JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(text);
      };
    const since = (n: number) => vendor.received.slice(n).map((r) => `${r.method} ${r.url.split('?')[0]}`);

    test('openai: embeddings, a batch input file uploaded and read back, a batch created and retrieved', async () => {
      const before = vendor.received.length;
      const embedded = await openai().embeddings.create({ model: 'embed-test', input: ['a', 'b'] });
      expect(embedded.data.map((d) => d.embedding)).toEqual([EMBEDDING, EMBEDDING]);

      const jsonl = '{"custom_id":"r1","method":"POST","url":"/v1/chat/completions","body":{}}\n';
      const file = {
        id: 'file-sdk-1',
        object: 'file',
        bytes: jsonl.length,
        created_at: 1,
        filename: 'in.jsonl',
        purpose: 'batch',
      };
      vendor.next(answer(200, file));
      const created = await openai().files.create({
        file: await toFile(Buffer.from(jsonl), 'in.jsonl'),
        purpose: 'batch',
      });
      expect(created).toEqual(file);
      const upload = vendor.last();
      expect(upload.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      expect(upload.body.toString()).toContain(jsonl);
      vendor.next((_req, res) =>
        res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(jsonl),
      );
      expect(await (await openai().files.content('file-sdk-1')).text()).toBe(jsonl);

      const batch = {
        id: 'batch_sdk_1',
        object: 'batch',
        endpoint: '/v1/chat/completions',
        input_file_id: 'file-sdk-1',
        completion_window: '24h',
        status: 'validating',
        created_at: 1,
      };
      vendor.next(answer(200, batch));
      const b = await openai().batches.create({
        input_file_id: 'file-sdk-1',
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      expect(b).toEqual(batch);
      vendor.next(answer(200, { ...batch, status: 'in_progress' }));
      expect((await openai().batches.retrieve('batch_sdk_1')).status).toBe('in_progress');

      expect(since(before)).toEqual([
        'POST /v1/embeddings',
        'POST /v1/files',
        'GET /v1/files/file-sdk-1/content',
        'POST /v1/batches',
        'GET /v1/batches/batch_sdk_1',
      ]);
      for (const r of vendor.received.slice(before))
        expect(r.headers.authorization).toBe(`Bearer ${VENDOR_KEYS.openai[0]}`);
      expectNoGenwayKey();
      const expected = {
        'embed-test': { requests: 1, input: 6, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
      };
      expect(await settled(() => gw.h.services.store.usage.get(keyId), expected)).toEqual(expected);
    });

    test('anthropic: a file uploaded under one vendor key is read with that key every time; models and batch lists', async () => {
      const before = vendor.received.length;
      const file = {
        id: 'file_sdk_a',
        type: 'file',
        filename: 'a.txt',
        mime_type: 'text/plain',
        size_bytes: 5,
        created_at: '2026-01-01T00:00:00Z',
        downloadable: false,
      };
      vendor.next(answer(200, file));
      const uploaded = await anthropic().beta.files.upload({
        file: await anthropicFile(Buffer.from('hello'), 'a.txt', { type: 'text/plain' }),
      });
      expect(uploaded).toEqual(file);
      const uploadKey = vendor.last().headers['x-api-key'];
      for (let i = 0; i < 3; i++) {
        vendor.next(answer(200, file));
        expect(await anthropic().beta.files.retrieveMetadata('file_sdk_a')).toEqual(file);
        // Round robin would alternate between the two vendor keys: the file's own key is used instead.
        expect(vendor.last().headers['x-api-key']).toBe(uploadKey);
      }
      vendor.next(
        answer(200, {
          type: 'model',
          id: 'claude-test',
          display_name: 'Claude Test',
          created_at: '2026-01-01T00:00:00Z',
        }),
      );
      expect((await anthropic().models.retrieve('claude-test')).id).toBe('claude-test');
      vendor.next(answer(200, { data: [], has_more: false, first_id: null, last_id: null }));
      const page = await anthropic().messages.batches.list();
      expect(page.data).toEqual([]);
      expect(since(before)).toEqual([
        'POST /v1/files',
        'GET /v1/files/file_sdk_a',
        'GET /v1/files/file_sdk_a',
        'GET /v1/files/file_sdk_a',
        'GET /v1/models/claude-test',
        'GET /v1/messages/batches',
      ]);
      expectNoGenwayKey();
    });

    test('@google/genai: embedContent, models get and list, a cached content created and read', async () => {
      const before = vendor.received.length;
      const embedded = await gemini().models.embedContent({ model: 'embed-test', contents: ['a', 'b'] });
      expect(embedded.embeddings?.map((e) => e.values)).toEqual([EMBEDDING, EMBEDDING]);

      vendor.next(answer(200, { name: 'models/gemini-test', displayName: 'Gemini Test' }));
      expect((await gemini().models.get({ model: 'gemini-test' })).displayName).toBe('Gemini Test');
      const listed: string[] = [];
      for await (const m of await gemini().models.list()) listed.push(m.name ?? '');
      expect(listed).toEqual(['models/gemini-test']);

      const cache = {
        name: 'cachedContents/sdk-c1',
        model: 'models/gemini-test',
        expireTime: '2026-12-01T00:00:00Z',
      };
      vendor.next(answer(200, cache));
      const created = await gemini().caches.create({
        model: 'gemini-test',
        config: { contents: 'A long document', ttl: '60s' },
      });
      expect(created.name).toBe('cachedContents/sdk-c1');
      vendor.next(answer(200, cache));
      expect((await gemini().caches.get({ name: 'cachedContents/sdk-c1' })).model).toBe('models/gemini-test');
      const v1 = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gw.base, apiVersion: 'v1' } });
      expect((await v1.models.generateContent({ model: 'gemini-test', contents: 'Hi' })).text).toBe(
        'Hello there',
      );
      expect(since(before)).toEqual([
        'POST /v1beta/models/embed-test:batchEmbedContents',
        'GET /v1beta/models/gemini-test',
        'GET /v1beta/models',
        'POST /v1beta/cachedContents',
        'GET /v1beta/cachedContents/sdk-c1',
        'POST /v1/models/gemini-test:generateContent',
      ]);
      for (const r of vendor.received.slice(before))
        expect(r.headers['x-goog-api-key']).toBe(VENDOR_KEYS.gemini[0]);
      expectNoGenwayKey();
    });

    test('@google/genai files.upload: the resumable protocol through Genway, the session URL pointing back at it', async () => {
      const before = vendor.received.length;
      const bytes = Buffer.alloc(300_000, 'z');
      vendor.next((_req, res) => {
        res.writeHead(200, {
          'x-goog-upload-status': 'active',
          'x-goog-upload-url': `${vendor.url}/upload/v1beta/files?upload_id=sdk-up-1&upload_protocol=resumable`,
          'content-length': '0',
        });
        res.end();
      });
      const file = {
        name: 'files/sdk-f1',
        mimeType: 'text/plain',
        sizeBytes: String(bytes.length),
        state: 'ACTIVE',
      };
      vendor.next(answer(200, { file }, { 'x-goog-upload-status': 'final' }));
      const uploaded = await gemini().files.upload({ file: new Blob([bytes], { type: 'text/plain' }) });
      expect(uploaded).toMatchObject(file);
      const [start, data] = vendor.received.slice(before);
      expect(`${start.method} ${start.url}`).toBe('POST /upload/v1beta/files');
      expect(start.headers['x-goog-upload-command']).toBe('start');
      // The SDK sent its bytes to the session URL Genway handed it: through Genway, with the vendor key.
      expect(`${data.method} ${data.url}`).toBe(
        'POST /upload/v1beta/files?upload_id=sdk-up-1&upload_protocol=resumable',
      );
      expect(data.headers['x-goog-upload-command']).toBe('upload, finalize');
      expect(data.headers['x-goog-api-key']).toBe(VENDOR_KEYS.gemini[0]);
      expect(data.body.equals(bytes)).toBe(true);
      expectNoGenwayKey();
    });
  });
});
