/**
 * Issue 34's conformance matrix through a real Genway: each official SDK (openai chat completions and Responses,
 * @anthropic-ai/sdk, @google/genai) calls routes whose target is a mock upstream of every other format
 * (test/helpers/format-mocks, whose answers the SDKs of their own format parse in test/e2e/format-mocks.test.ts). The
 * mock checks every translated request as its vendor would; the caller's SDK parses every translated answer; Genway
 * must meter, under the route's name, exactly the usage the mock reported, and charge its price. The case list is
 * test/helpers/translation-matrix/cases.ts, from which README.md's matrix is rendered (checked at the end of this file).
 * The frameworks' rows run in test/e2e/translation-frameworks.test.ts.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import type * as GenAI from '@google/genai' with { 'resolution-mode': 'import' };
import OpenAI from 'openai';
// Defines the fetch dispatcher in the test's realm, where @google/genai looks for it.
import 'undici';
import { SIGNATURE, THINKING, type Seen } from '../helpers/format-mocks';
import { storeModes } from '../helpers/redis';
import {
  REDIS_SCENARIOS,
  SCENARIOS,
  SDK_CALLERS,
  targetsOf,
  type Scenario,
  type TargetFormat,
} from '../helpers/translation-matrix/cases';
import {
  cutOff,
  leaveMidStream,
  partialOf,
  ROUTE,
  TARGET_MODEL,
  useMatrixGateway,
  type MatrixGateway,
  type MatrixKey,
} from '../helpers/translation-matrix/gateway';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ApiError: GoogleApiError, GoogleGenAI } = require('@google/genai') as typeof GenAI;

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const weather = {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city'],
  },
};
const time = {
  name: 'get_time',
  description: 'The time in a zone',
  schema: { type: 'object', properties: { zone: { type: 'string' } } },
};
const WEATHER_ARGS = { city: 'ok', days: 42 };
/** What the mocks answer a prompt, less its markers. */
const hello = (target: TargetFormat, said: string) => `Hello from the ${target} mock. You said: ${said}`;
/** A stream slow enough to leave in the middle of. */
const SLOW = 'hello there, a long and slow answer please [mock:slow=30]';

type Case = () => Promise<void>;
type Cases = Partial<Record<Scenario, Case>>;

/** Sends one call; returns what the target's mock received meanwhile. */
async function upstreamOf(
  m: MatrixGateway,
  target: TargetFormat,
  call: () => Promise<unknown>,
): Promise<Seen[]> {
  const mark = m.mark();
  await call();
  return m.since(target, mark);
}

/** A key allowed another route only, a key over its budget: the refusals every caller must get in its own shape. */
async function gates(m: MatrixGateway, target: TargetFormat, call: (key: MatrixKey) => Promise<unknown>) {
  const outsider = await m.key({ models: ['another-route'] });
  const mark = m.mark();
  const refused = await call(outsider).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(m.since(target, mark)).toEqual([]);
  await m.expectUsage(outsider, {});
  return refused;
}

/** A key whose daily budget (100 micro-USD) one translated call crosses: the next call is refused. */
async function overBudget(
  m: MatrixGateway,
  target: TargetFormat,
  call: (key: MatrixKey) => Promise<unknown>,
): Promise<unknown> {
  const k = await m.key();
  await m.budget(k, 0.0001);
  const seen = await upstreamOf(m, target, () => call(k));
  await m.expectMetered(k, target, seen);
  const mark = m.mark();
  const refused = await call(k).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(m.since(target, mark)).toEqual([]);
  await m.expectMetered(k, target, seen);
  return refused;
}

/** Leaves a slow stream at its first text; the upstream is stopped and the usage seen so far metered. */
async function disconnect(
  m: MatrixGateway,
  target: TargetFormat,
  path: string,
  headers: (key: string) => Record<string, string>,
  body: unknown,
) {
  const k = await m.key();
  const mark = m.mark();
  const had = await leaveMidStream(`${m.gw.base}${path}`, headers(k.key), body, /Hello f/);
  expect(had).toContain('Hello f');
  const seen = m.since(target, mark);
  expect(seen).toHaveLength(1);
  expect(await cutOff(seen[0]!)).toBe(true);
  await m.expectUsage(k, partialOf(target, seen));
}

/** A stream the upstream breaks off with an error: the caller's SDK throws, the usage seen so far is metered. */
async function brokenStream(
  m: MatrixGateway,
  target: TargetFormat,
  k: MatrixKey,
  consume: () => Promise<unknown>,
) {
  const mark = m.mark();
  await expect(consume()).rejects.toBeDefined();
  await m.expectUsage(k, partialOf(target, m.since(target, mark)));
}

function openaiChatCases(m: MatrixGateway, target: TargetFormat): Cases {
  const route = ROUTE[target];
  const client = (k: MatrixKey) => new OpenAI({ apiKey: k.key, baseURL: `${m.gw.base}/v1`, maxRetries: 0 });
  const tools: OpenAI.ChatCompletionTool[] = [weather, time].map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.schema },
  }));
  return {
    async text() {
      const k = await m.key();
      let answer!: OpenAI.ChatCompletion;
      const seen = await upstreamOf(m, target, async () => {
        answer = await client(k).chat.completions.create({
          model: route,
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'hi [mock:cached=3]' },
          ],
        });
      });
      const u = seen[0]!.usage!;
      expect(answer.model).toBe(route);
      expect(answer.choices[0]!.message.content).toBe(hello(target, 'hi'));
      expect(answer.choices[0]!.finish_reason).toBe('stop');
      expect(answer.usage).toMatchObject({
        prompt_tokens: u.input,
        completion_tokens: u.output,
        total_tokens: u.input + u.output,
        prompt_tokens_details: { cached_tokens: 3 },
      });
      if (target === 'messages')
        expect(seen[0]!.json).toMatchObject({
          model: TARGET_MODEL,
          max_tokens: 8192,
          system: [{ type: 'text', text: 'Be brief.' }],
        });
      else {
        expect(seen[0]!.url).toBe(`/v1beta/models/${TARGET_MODEL}:generateContent`);
        expect(seen[0]!.json!.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
      }
      await m.expectMetered(k, target, seen);
    },

    async stream() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const stream = client(k).chat.completions.stream({
          model: route,
          messages: [{ role: 'user', content: 'hello there' }],
          stream_options: { include_usage: true },
        });
        const chunks: OpenAI.ChatCompletionChunk[] = [];
        for await (const chunk of stream) chunks.push(chunk);
        const final = await stream.finalChatCompletion();
        expect(final.choices[0]!.message.content).toBe(hello(target, 'hello there'));
        expect(chunks.length).toBeGreaterThan(3);
        expect(chunks[chunks.length - 1]!.choices).toEqual([]);
        expect(chunks[chunks.length - 1]!.usage!.completion_tokens).toBe(9);
        // Not asked: no usage chunk, though Genway meters the call all the same.
        const plain = await client(k).chat.completions.create({
          model: route,
          messages: [{ role: 'user', content: 'x' }],
          stream: true,
        });
        const seenChunks: OpenAI.ChatCompletionChunk[] = [];
        for await (const chunk of plain) seenChunks.push(chunk);
        expect(seenChunks.every((c) => c.choices.length === 1 && c.usage == null)).toBe(true);
      });
      expect(seen).toHaveLength(2);
      await m.expectMetered(k, target, seen);
    },

    async tools() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const messages: OpenAI.ChatCompletionMessageParam[] = [
          { role: 'user', content: 'weather and time [mock:parallel]' },
        ];
        const final = await client(k)
          .chat.completions.stream({ model: route, messages, tools })
          .finalChatCompletion();
        const message = final.choices[0]!.message;
        expect(final.choices[0]!.finish_reason).toBe('tool_calls');
        expect(
          message.tool_calls!.map(
            (c) => c.type === 'function' && [c.function.name, JSON.parse(c.function.arguments)],
          ),
        ).toEqual([
          ['get_weather', WEATHER_ARGS],
          ['get_time', { zone: 'ok' }],
        ]);
        messages.push(message);
        for (const call of message.tool_calls!) {
          messages.push({
            role: 'tool',
            tool_call_id: call.id,
            content: `result of ${call.type === 'function' ? call.function.name : ''}`,
          });
        }
        const second = await client(k).chat.completions.create({ model: route, messages, tools });
        expect(second.choices[0]!.message.content).toBe(
          'Tool results: result of get_weather | result of get_time',
        );
      });
      await m.expectMetered(k, target, seen);
    },

    async images() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await client(k).chat.completions.create({
          model: route,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what is this' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'low' } },
                { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
              ],
            },
          ],
        });
        expect(answer.choices[0]!.message.content).toContain('I see 2 images.');
      });
      await m.expectMetered(k, target, seen);
    },

    async json() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await client(k).chat.completions.parse({
          model: route,
          messages: [{ role: 'user', content: 'a city' }],
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'city', schema: weather.schema, strict: true },
          },
        });
        expect(answer.choices[0]!.message.parsed).toEqual(WEATHER_ARGS);
        // JSON without a schema: the messages format has no such mode.
        const loose = client(k).chat.completions.create({
          model: route,
          messages: [{ role: 'user', content: 'any JSON' }],
          response_format: { type: 'json_object' },
        });
        if (target === 'messages')
          await expect(loose).rejects.toMatchObject({
            status: 400,
            message: expect.stringContaining('response_format'),
          });
        else expect(JSON.parse((await loose).choices[0]!.message.content!)).toEqual({ ok: true });
      });
      await m.expectMetered(k, target, seen);
    },

    async reasoning() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await client(k).chat.completions.create({
          model: route,
          messages: [{ role: 'user', content: 'think' }],
          reasoning_effort: 'low',
        });
        const message = answer.choices[0]!.message as unknown as { reasoning_content: string };
        expect(message.reasoning_content).toBe(THINKING);
        expect(answer.usage!.completion_tokens_details!.reasoning_tokens).toBe(10);
      });
      await m.expectMetered(k, target, seen);
    },

    async errors() {
      const k = await m.key();
      const failed = client(k).chat.completions.create({
        model: route,
        messages: [{ role: 'user', content: '[mock:fail=429]' }],
      });
      await expect(failed).rejects.toBeInstanceOf(OpenAI.RateLimitError);
      await expect(failed).rejects.toMatchObject({
        status: 429,
        message: expect.stringContaining('upstream'),
      });
      const mark = m.mark();
      const audio = client(k).chat.completions.create({
        model: route,
        messages: [
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
        ],
      });
      await expect(audio).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      await expect(audio).rejects.toMatchObject({
        message: expect.stringContaining('messages[0].content[0].type'),
      });
      expect(m.since(target, mark)).toEqual([]);
      await m.expectUsage(k, {});
      await brokenStream(m, target, k, async () => {
        const stream = await client(k).chat.completions.create({
          model: route,
          messages: [{ role: 'user', content: '[mock:stream-fail] hello there' }],
          stream: true,
        });
        for await (const _ of stream) void _;
      });
    },

    async 'allow-list'() {
      const refused = await gates(m, target, (k) =>
        client(k).chat.completions.create({ model: route, messages: [{ role: 'user', content: 'hi' }] }),
      );
      expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(refused).toMatchObject({ status: 403, error: { type: expect.any(String) } });
    },

    async budget() {
      const refused = await overBudget(m, target, (k) =>
        client(k).chat.completions.create({ model: route, messages: [{ role: 'user', content: 'hi' }] }),
      );
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect(refused).toMatchObject({ status: 402 });
    },

    disconnect: () =>
      disconnect(m, target, '/v1/chat/completions', (key) => ({ authorization: `Bearer ${key}` }), {
        model: route,
        stream: true,
        messages: [{ role: 'user', content: SLOW }],
      }),
  };
}

function anthropicCases(m: MatrixGateway, target: TargetFormat): Cases {
  const route = ROUTE[target];
  const client = (k: MatrixKey) => new Anthropic({ apiKey: k.key, baseURL: m.gw.base, maxRetries: 0 });
  const tools: Anthropic.Tool[] = [weather, time].map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.schema as Anthropic.Tool.InputSchema,
  }));
  return {
    async text() {
      const k = await m.key();
      let answer!: Anthropic.Message;
      const seen = await upstreamOf(m, target, async () => {
        answer = await client(k).messages.create({
          model: route,
          max_tokens: 200,
          system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
          messages: [{ role: 'user', content: 'hi [mock:cached=3]' }],
        });
      });
      const u = seen[0]!.usage!;
      expect(answer.model).toBe(route);
      expect(answer.content).toEqual([{ type: 'text', text: hello(target, 'hi'), citations: null }]);
      expect(answer.stop_reason).toBe('end_turn');
      expect(answer.usage).toMatchObject({
        input_tokens: u.input - 3,
        cache_read_input_tokens: 3,
        output_tokens: u.output,
      });
      if (target === 'chat')
        expect(seen[0]!.json).toMatchObject({
          model: TARGET_MODEL,
          max_completion_tokens: 200,
          messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user' }],
        });
      else expect(seen[0]!.url).toBe(`/v1beta/models/${TARGET_MODEL}:generateContent`);
      await m.expectMetered(k, target, seen);
    },

    async stream() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const stream = client(k).messages.stream({
          model: route,
          max_tokens: 200,
          messages: [{ role: 'user', content: 'hello there' }],
        });
        const types: string[] = [];
        stream.on('streamEvent', (e) => types.push(e.type));
        const final = await stream.finalMessage();
        expect(final.content).toEqual([
          { type: 'text', text: hello(target, 'hello there'), citations: null },
        ]);
        expect(final.usage.output_tokens).toBe(9);
        expect(types[0]).toBe('message_start');
        expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
      });
      await m.expectMetered(k, target, seen);
    },

    async tools() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const messages: Anthropic.MessageParam[] = [
          { role: 'user', content: 'weather and time [mock:parallel]' },
        ];
        const final = await client(k)
          .messages.stream({ model: route, max_tokens: 200, messages, tools })
          .finalMessage();
        expect(final.stop_reason).toBe('tool_use');
        const uses = final.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
        expect(uses.map((b) => [b.name, b.input])).toEqual([
          ['get_weather', WEATHER_ARGS],
          ['get_time', { zone: 'ok' }],
        ]);
        messages.push({ role: 'assistant', content: final.content });
        messages.push({
          role: 'user',
          content: uses.map((b) => ({
            type: 'tool_result' as const,
            tool_use_id: b.id,
            content: `result of ${b.name}`,
          })),
        });
        const second = await client(k).messages.create({ model: route, max_tokens: 200, messages, tools });
        expect(second.content).toEqual([
          { type: 'text', text: 'Tool results: result of get_weather | result of get_time', citations: null },
        ]);
      });
      await m.expectMetered(k, target, seen);
    },

    async images() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await client(k).messages.create({
          model: route,
          max_tokens: 200,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
                { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
                { type: 'text', text: 'what is this' },
              ],
            },
          ],
        });
        expect((answer.content[0] as Anthropic.TextBlock).text).toContain('I see 2 images.');
      });
      await m.expectMetered(k, target, seen);
    },

    async json() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await client(k).messages.create({
          model: route,
          max_tokens: 200,
          messages: [{ role: 'user', content: 'a city' }],
          output_config: { format: { type: 'json_schema', schema: weather.schema } },
        });
        expect(JSON.parse((answer.content[0] as Anthropic.TextBlock).text)).toEqual(WEATHER_ARGS);
      });
      await m.expectMetered(k, target, seen);
    },

    async reasoning() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await client(k).messages.create({
          model: route,
          max_tokens: 4000,
          thinking: { type: 'enabled', budget_tokens: 2000 },
          messages: [{ role: 'user', content: 'think' }],
        });
        expect(answer.content[0]).toMatchObject({ type: 'thinking', thinking: THINKING });
        expect(answer.usage.output_tokens_details).toEqual({ thinking_tokens: 10 });
      });
      const sent = seen[0]!.json!;
      if (target === 'chat') expect(sent.reasoning_effort).toBe('low');
      else
        expect((sent.generationConfig as Record<string, unknown>).thinkingConfig).toEqual({
          thinkingBudget: 2000,
          includeThoughts: true,
        });
      await m.expectMetered(k, target, seen);
    },

    async count() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const counting = client(k).messages.countTokens({
          model: route,
          messages: [{ role: 'user', content: 'count me' }],
        });
        if (target === 'chat')
          await expect(counting).rejects.toMatchObject({
            status: 400,
            error: { error: { type: 'invalid_request_error', message: expect.stringContaining('count') } },
          });
        else expect((await counting).input_tokens).toBe(Math.round(m.mocks[target].last().body.length / 4));
      });
      expect(seen).toHaveLength(target === 'chat' ? 0 : 1);
      await m.expectUsage(k, {}); // a count costs nothing
    },

    async errors() {
      const k = await m.key();
      const failed = client(k).messages.create({
        model: route,
        max_tokens: 10,
        messages: [{ role: 'user', content: '[mock:fail=429]' }],
      });
      await expect(failed).rejects.toBeInstanceOf(Anthropic.RateLimitError);
      await expect(failed).rejects.toMatchObject({
        status: 429,
        error: { error: { type: 'rate_limit_error', message: expect.stringContaining('upstream') } },
      });
      const server = client(k).messages.create({
        model: route,
        max_tokens: 10,
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
        messages: [{ role: 'user', content: 'hi' }],
      });
      await expect(server).rejects.toBeInstanceOf(Anthropic.BadRequestError);
      await expect(server).rejects.toMatchObject({
        error: { error: { message: expect.stringContaining('tools[0].type') } },
      });
      await m.expectUsage(k, {});
      await brokenStream(m, target, k, () =>
        client(k)
          .messages.stream({
            model: route,
            max_tokens: 10,
            messages: [{ role: 'user', content: '[mock:stream-fail] hello there' }],
          })
          .finalMessage(),
      );
    },

    async 'allow-list'() {
      const refused = await gates(m, target, (k) =>
        client(k).messages.create({
          model: route,
          max_tokens: 10,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
      expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect(refused).toMatchObject({
        status: 403,
        error: { type: 'error', error: { type: 'permission_error' } },
      });
    },

    async budget() {
      const refused = await overBudget(m, target, (k) =>
        client(k).messages.create({
          model: route,
          max_tokens: 10,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      );
      expect(refused).toBeInstanceOf(Anthropic.APIError);
      expect(refused).toMatchObject({ status: 402, error: { type: 'error' } });
    },

    disconnect: () =>
      disconnect(m, target, '/v1/messages', (key) => ({ 'x-api-key': key }), {
        model: route,
        max_tokens: 200,
        stream: true,
        messages: [{ role: 'user', content: SLOW }],
      }),
  };
}

function googleCases(m: MatrixGateway, target: TargetFormat): Cases {
  const route = ROUTE[target];
  const ai = (k: MatrixKey) => new GoogleGenAI({ apiKey: k.key, httpOptions: { baseUrl: m.gw.base } });
  const functionDeclarations = [weather, time].map((t) => ({
    name: t.name,
    description: t.description,
    parametersJsonSchema: t.schema,
  }));
  return {
    async text() {
      const k = await m.key();
      let answer!: GenAI.GenerateContentResponse;
      const seen = await upstreamOf(m, target, async () => {
        answer = await ai(k).models.generateContent({
          model: route,
          contents: 'hi [mock:cached=3]',
          config: { systemInstruction: 'Be brief.' },
        });
      });
      const u = seen[0]!.usage!;
      expect(answer.text).toBe(hello(target, 'hi'));
      expect(answer.modelVersion).toBe(route);
      expect(answer.candidates![0]!.finishReason).toBe('STOP');
      expect(answer.usageMetadata).toMatchObject({
        promptTokenCount: u.input,
        cachedContentTokenCount: 3,
        candidatesTokenCount: u.output,
      });
      expect(seen[0]!.json).toMatchObject({ model: TARGET_MODEL });
      await m.expectMetered(k, target, seen);
    },

    async stream() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const chunks: GenAI.GenerateContentResponse[] = [];
        for await (const chunk of await ai(k).models.generateContentStream({
          model: route,
          contents: 'hello there',
        }))
          chunks.push(chunk);
        expect(chunks.map((c) => c.text ?? '').join('')).toBe(hello(target, 'hello there'));
        const last = chunks[chunks.length - 1]!;
        expect(last.candidates![0]!.finishReason).toBe('STOP');
        expect(last.usageMetadata!.candidatesTokenCount).toBe(9);
        expect(chunks.length).toBeGreaterThan(3);
      });
      await m.expectMetered(k, target, seen);
    },

    async tools() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const chat = ai(k).chats.create({ model: route, config: { tools: [{ functionDeclarations }] } });
        const chunks: GenAI.GenerateContentResponse[] = [];
        for await (const chunk of await chat.sendMessageStream({
          message: 'weather and time [mock:parallel]',
        }))
          chunks.push(chunk);
        const calls = chunks.flatMap((c) => c.functionCalls ?? []);
        expect(calls.map((c) => [c.name, c.args])).toEqual([
          ['get_weather', WEATHER_ARGS],
          ['get_time', { zone: 'ok' }],
        ]);
        const second = await chat.sendMessage({
          message: calls.map((c) => ({
            functionResponse: { id: c.id, name: c.name, response: { output: `result of ${c.name}` } },
          })),
        });
        expect(second.text).toBe('Tool results: result of get_weather | result of get_time');
      });
      await m.expectMetered(k, target, seen);
    },

    async images() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await ai(k).models.generateContent({
          model: route,
          contents: [
            {
              role: 'user',
              parts: [
                { text: 'what is this' },
                { inlineData: { mimeType: 'image/png', data: PNG } },
                { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png' } },
              ],
            },
          ],
        });
        expect(answer.text).toContain('I see 2 images.');
      });
      await m.expectMetered(k, target, seen);
    },

    async json() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await ai(k).models.generateContent({
          model: route,
          contents: 'a city',
          config: { responseMimeType: 'application/json', responseJsonSchema: weather.schema },
        });
        expect(JSON.parse(answer.text!)).toEqual(WEATHER_ARGS);
      });
      await m.expectMetered(k, target, seen);
    },

    async reasoning() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await ai(k).models.generateContent({
          model: route,
          contents: 'think',
          config: { thinkingConfig: { thinkingBudget: 2000, includeThoughts: true } },
        });
        const parts = answer.candidates![0]!.content!.parts!;
        expect(parts.filter((p) => p.thought).map((p) => p.text)).toEqual([THINKING]);
        expect(answer.text).toBe(hello(target, 'think'));
        expect(answer.usageMetadata!.thoughtsTokenCount).toBe(10);
      });
      await m.expectMetered(k, target, seen);
    },

    async count() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const counting = ai(k).models.countTokens({ model: route, contents: 'count me' });
        if (target === 'chat') {
          await expect(counting).rejects.toBeInstanceOf(GoogleApiError);
          await expect(counting).rejects.toMatchObject({
            status: 400,
            message: expect.stringContaining('count'),
          });
        } else expect((await counting).totalTokens).toBe(Math.round(m.mocks[target].last().body.length / 4));
      });
      expect(seen).toHaveLength(target === 'chat' ? 0 : 1);
      await m.expectUsage(k, {});
    },

    async errors() {
      const k = await m.key();
      const failed = ai(k).models.generateContent({ model: route, contents: '[mock:fail=429]' });
      await expect(failed).rejects.toBeInstanceOf(GoogleApiError);
      await expect(failed).rejects.toMatchObject({
        status: 429,
        message: expect.stringContaining('upstream'),
      });
      const grounded = ai(k).models.generateContent({
        model: route,
        contents: 'hi',
        config: { tools: [{ googleSearch: {} }] },
      });
      await expect(grounded).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('tools[0].googleSearch'),
      });
      await m.expectUsage(k, {});
      await brokenStream(m, target, k, async () => {
        for await (const _ of await ai(k).models.generateContentStream({
          model: route,
          contents: '[mock:stream-fail] hello there',
        }))
          void _;
      });
    },

    async 'allow-list'() {
      const refused = await gates(m, target, (k) =>
        ai(k).models.generateContent({ model: route, contents: 'hi' }),
      );
      expect(refused).toBeInstanceOf(GoogleApiError);
      expect(refused).toMatchObject({ status: 403, message: expect.stringContaining('PERMISSION_DENIED') });
    },

    async budget() {
      const refused = await overBudget(m, target, (k) =>
        ai(k).models.generateContent({ model: route, contents: 'hi' }),
      );
      expect(refused).toBeInstanceOf(GoogleApiError);
      expect(refused).toMatchObject({ status: 402 });
    },

    disconnect: () =>
      disconnect(
        m,
        target,
        `/v1beta/models/${route}:streamGenerateContent?alt=sse`,
        (key) => ({ 'x-goog-api-key': key }),
        { contents: [{ role: 'user', parts: [{ text: SLOW }] }] },
      ),
  };
}

function responsesCases(m: MatrixGateway, target: TargetFormat): Cases {
  const route = ROUTE[target];
  const client = (k: MatrixKey) => new OpenAI({ apiKey: k.key, baseURL: `${m.gw.base}/v1`, maxRetries: 0 });
  const tools: OpenAI.Responses.FunctionTool[] = [weather, time].map((t) => ({
    type: 'function',
    name: t.name,
    description: t.description,
    parameters: t.schema,
    strict: false,
  }));
  return {
    async text() {
      const k = await m.key();
      let answer!: OpenAI.Responses.Response;
      const seen = await upstreamOf(m, target, async () => {
        answer = await client(k).responses.create({
          model: route,
          instructions: 'Be brief.',
          input: 'hi [mock:cached=3]',
        });
      });
      const u = seen[0]!.usage!;
      expect(answer.output_text).toBe(hello(target, 'hi'));
      expect(answer.status).toBe('completed');
      expect(answer.model).toBe(route);
      expect(answer.usage).toMatchObject({
        input_tokens: u.input,
        output_tokens: u.output,
        input_tokens_details: { cached_tokens: 3 },
      });
      await m.expectMetered(k, target, seen);
    },

    async stream() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const stream = client(k).responses.stream({ model: route, input: 'hello there' });
        const types: string[] = [];
        for await (const e of stream) types.push(e.type);
        const final = await stream.finalResponse();
        expect(final.output_text).toBe(hello(target, 'hello there'));
        expect(final.usage!.output_tokens).toBe(9);
        expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
        expect(types[types.length - 1]).toBe('response.completed');
      });
      await m.expectMetered(k, target, seen);
    },

    async tools() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const input: OpenAI.Responses.ResponseInputItem[] = [
          { role: 'user', content: 'weather and time [mock:parallel]' },
        ];
        const final = await client(k).responses.stream({ model: route, input, tools }).finalResponse();
        const calls = final.output.flatMap((o) => (o.type === 'function_call' ? [o] : []));
        expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
          ['get_weather', WEATHER_ARGS],
          ['get_time', { zone: 'ok' }],
        ]);
        input.push(...(final.output as OpenAI.Responses.ResponseInputItem[]));
        for (const c of calls)
          input.push({ type: 'function_call_output', call_id: c.call_id, output: `result of ${c.name}` });
        const second = await client(k).responses.create({ model: route, input, tools });
        expect(second.output_text).toBe('Tool results: result of get_weather | result of get_time');
      });
      await m.expectMetered(k, target, seen);
    },

    async 'free-form tool'() {
      const k = await m.key();
      const patch: OpenAI.Responses.CustomTool = {
        type: 'custom',
        name: 'apply_patch',
        description: 'Edit files',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/' },
      };
      const seen = await upstreamOf(m, target, async () => {
        const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'fix it [mock:tool]' }];
        const streamed = await client(k)
          .responses.stream({ model: route, input, tools: [patch] })
          .finalResponse();
        expect(streamed.output.map((o) => o.type === 'custom_tool_call' && [o.name, o.input])).toEqual([
          ['apply_patch', 'ok'],
        ]);
        input.push(...(streamed.output as OpenAI.Responses.ResponseInputItem[]));
        const call = streamed.output[0] as OpenAI.Responses.ResponseCustomToolCall;
        input.push({ type: 'custom_tool_call_output', call_id: call.call_id, output: 'patched' });
        const second = await client(k).responses.create({ model: route, input, tools: [patch] });
        expect(second.output_text).toBe('Tool results: patched');
      });
      expect(JSON.stringify(seen[0]!.json)).toContain('The input must follow this lark grammar');
      await m.expectMetered(k, target, seen);
    },

    async namespace() {
      const k = await m.key();
      const agents = {
        type: 'namespace',
        name: 'agents',
        description: 'Sub-agents',
        tools: [
          {
            type: 'function',
            name: 'close_agent',
            description: 'Close an agent',
            strict: false,
            parameters: { type: 'object', properties: { target: { type: 'string' } }, required: ['target'] },
          },
        ],
      } as unknown as OpenAI.Responses.Tool;
      const seen = await upstreamOf(m, target, async () => {
        const input: OpenAI.Responses.ResponseInputItem[] = [
          { role: 'user', content: 'close it [mock:tool=agents__close_agent]' },
        ];
        for (const stream of [true, false]) {
          const first = stream
            ? await client(k)
                .responses.stream({ model: route, input, tools: [agents] })
                .finalResponse()
            : await client(k).responses.create({ model: route, input, tools: [agents] });
          expect(first.output).toMatchObject([
            { type: 'function_call', name: 'close_agent', namespace: 'agents', arguments: '{"target":"ok"}' },
          ]);
        }
        const call = (await client(k).responses.create({ model: route, input, tools: [agents] }))
          .output[0] as OpenAI.Responses.ResponseFunctionToolCall;
        input.push(call, { type: 'function_call_output', call_id: call.call_id, output: 'closed' });
        const second = await client(k).responses.create({ model: route, input, tools: [agents] });
        expect(second.output_text).toBe('Tool results: closed');
      });
      // The target saw one function, named by its namespace, and the call by that name on the second turn.
      expect(JSON.stringify(seen[0]!.json)).toContain('agents__close_agent');
      expect(JSON.stringify(seen[3]!.json)).toContain('agents__close_agent');
      await m.expectMetered(k, target, seen);
    },

    async images() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await client(k).responses.create({
          model: route,
          input: [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: 'what is this' },
                { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
                { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'low' },
              ],
            },
          ],
        });
        expect(answer.output_text).toContain('I see 2 images.');
      });
      await m.expectMetered(k, target, seen);
    },

    async json() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const answer = await client(k).responses.parse({
          model: route,
          input: 'a city',
          text: { format: { type: 'json_schema', name: 'city', schema: weather.schema, strict: true } },
        });
        expect(answer.output_parsed).toEqual(WEATHER_ARGS);
      });
      await m.expectMetered(k, target, seen);
    },

    async reasoning() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const input: OpenAI.Responses.ResponseInputItem[] = [
          { role: 'user', content: 'think, weather [mock:tool]' },
        ];
        const first = await client(k).responses.create({
          model: route,
          input,
          tools,
          reasoning: { effort: 'low', summary: 'auto' },
          include: ['reasoning.encrypted_content'],
          store: false,
        });
        const reasoning = first.output.find((o) => o.type === 'reasoning');
        expect(reasoning).toMatchObject({ summary: [{ type: 'summary_text', text: THINKING }] });
        if (target === 'messages') expect(reasoning).toMatchObject({ encrypted_content: SIGNATURE });
        expect(first.usage!.output_tokens_details.reasoning_tokens).toBe(10);
        input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
        for (const c of first.output)
          if (c.type === 'function_call')
            input.push({ type: 'function_call_output', call_id: c.call_id, output: 'sunny' });
        const second = await client(k).responses.create({
          model: route,
          input,
          tools,
          reasoning: { effort: 'low', summary: 'auto' },
          store: false,
        });
        expect(second.output_text).toBe('Tool results: sunny');
      });
      // The signed thinking went back to the messages target with the tool's result.
      if (target === 'messages')
        expect(JSON.stringify(seen[1]!.json)).toContain(
          JSON.stringify({ type: 'thinking', thinking: THINKING, signature: SIGNATURE }).slice(1, -1),
        );
      await m.expectMetered(k, target, seen);
    },

    async count() {
      const k = await m.key();
      const seen = await upstreamOf(m, target, async () => {
        const counting = client(k).responses.inputTokens.count({ model: route, input: 'count me' });
        if (target === 'chat') {
          await expect(counting).rejects.toBeInstanceOf(OpenAI.BadRequestError);
          await expect(counting).rejects.toMatchObject({ message: expect.stringContaining('count') });
        } else expect((await counting).input_tokens).toBe(Math.round(m.mocks[target].last().body.length / 4));
      });
      expect(seen).toHaveLength(target === 'chat' ? 0 : 1);
      await m.expectUsage(k, {});
    },

    async errors() {
      const k = await m.key();
      const failed = client(k).responses.create({ model: route, input: '[mock:fail=429]' });
      await expect(failed).rejects.toBeInstanceOf(OpenAI.RateLimitError);
      await expect(failed).rejects.toMatchObject({
        status: 429,
        message: expect.stringContaining('upstream'),
      });
      const chained = client(k).responses.create({
        model: route,
        input: 'hi',
        previous_response_id: 'resp_1',
      });
      await expect(chained).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      await expect(chained).rejects.toMatchObject({
        message: expect.stringContaining('previous_response_id'),
      });
      const search = client(k).responses.create({
        model: route,
        input: 'hi',
        tools: [{ type: 'web_search' }],
      });
      await expect(search).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('tools[0].type'),
      });
      await m.expectUsage(k, {});
      await brokenStream(m, target, k, async () => {
        const stream = await client(k).responses.create({
          model: route,
          input: '[mock:stream-fail] hello there',
          stream: true,
        });
        for await (const e of stream)
          if (e.type === 'response.failed') throw new Error(e.response.error?.message);
      });
    },

    async 'allow-list'() {
      const refused = await gates(m, target, (k) =>
        client(k).responses.create({ model: route, input: 'hi' }),
      );
      expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(refused).toMatchObject({ status: 403 });
    },

    async budget() {
      const refused = await overBudget(m, target, (k) =>
        client(k).responses.create({ model: route, input: 'hi' }),
      );
      expect(refused).toBeInstanceOf(OpenAI.APIError);
      expect(refused).toMatchObject({ status: 402 });
    },

    disconnect: () =>
      disconnect(m, target, '/v1/responses', (key) => ({ authorization: `Bearer ${key}` }), {
        model: route,
        stream: true,
        input: SLOW,
      }),
  };
}

const CASES: Record<string, (m: MatrixGateway, target: TargetFormat) => Cases> = {
  'openai.chat': openaiChatCases,
  'openai.responses': responsesCases,
  anthropic: anthropicCases,
  google: googleCases,
};

describe.each(storeModes)('translation through Genway (%s store)', (_mode, redis) => {
  const m = useMatrixGateway(redis);
  for (const caller of SDK_CALLERS) {
    describe(`${caller.id} caller`, () => {
      for (const target of targetsOf(caller)) {
        describe(`to a ${target} upstream`, () => {
          const cases = CASES[caller.id]!(m, target);
          for (const scenario of caller.scenarios) {
            if (redis && !REDIS_SCENARIOS.includes(scenario)) continue;
            test(`${scenario}: ${SCENARIOS[scenario]}`, async () => {
              const run = cases[scenario];
              if (!run)
                throw new Error(`the case list names ${scenario} for ${caller.id}: no test implements it`);
              await run();
            });
          }
        });
      }
    });
  }
});

test('README.md’s matrix is the case list (node scripts/translation-matrix.js rewrites it)', () => {
  const root = path.join(__dirname, '../..');
  expect(() =>
    execFileSync(process.execPath, ['scripts/translation-matrix.js', '--check'], {
      cwd: root,
      stdio: 'pipe',
    }),
  ).not.toThrow();
});
