/**
 * The mock upstreams that judge translations (test/helpers/format-mocks) are first judged themselves: each is called
 * by the real SDK of its own format, which must parse every answer (JSON, streams, tool calls over two turns, JSON
 * output, reasoning, token counts, errors) and yield the expected values.
 */
import Anthropic from '@anthropic-ai/sdk';
import type * as GenAI from '@google/genai' with { 'resolution-mode': 'import' };
import OpenAI from 'openai';
// Defines the fetch dispatcher in the test's realm, where @google/genai looks for it.
import 'undici';

// @google/genai ships ESM types in a "type": "module" package; its CommonJS build is what Node loads here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { ApiError, GoogleGenAI } = require('@google/genai') as typeof GenAI;
type GoogleGenAI = GenAI.GoogleGenAI;
type Content = GenAI.Content;
import { FormatMock, SIGNATURE, THINKING, THOUGHT_SIGNATURE } from '../helpers/format-mocks';

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

describe('the chat completions mock, through the openai SDK', () => {
  let mock: FormatMock;
  let client: OpenAI;
  beforeAll(async () => {
    mock = await new FormatMock('chat').start();
    client = new OpenAI({ apiKey: 'sk-test', baseURL: `${mock.url}/v1`, maxRetries: 0 });
  });
  afterAll(() => mock.stop());

  const tools: OpenAI.ChatCompletionTool[] = [weather, time].map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.schema },
  }));

  test('a JSON answer with usage', async () => {
    const answer = await client.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi [mock:cached=3]' }],
    });
    expect(answer.choices[0]!.message.content).toBe('Hello from the chat mock. You said: hi');
    expect(answer.choices[0]!.finish_reason).toBe('stop');
    expect(answer.usage?.prompt_tokens_details?.cached_tokens).toBe(3);
    expect(answer.usage!.completion_tokens).toBe(8);
  });

  test('a stream with the usage chunk, parsed by the SDK’s stream helper', async () => {
    const stream = client.chat.completions.stream({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hello there' }],
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Hello from the chat mock. You said: hello there');
    expect(final.usage!.total_tokens).toBe(final.usage!.prompt_tokens + 9);
    expect(chunks[chunks.length - 1]!.choices).toEqual([]);
    expect(chunks.length).toBeGreaterThan(5);
  });

  test('parallel tool calls streamed as argument deltas, then their results on a second turn', async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'weather and time [mock:parallel]' },
    ];
    const stream = client.chat.completions.stream({ model: 'gpt-x', messages, tools });
    const final = await stream.finalChatCompletion();
    const message = final.choices[0]!.message;
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(
      message.tool_calls!.map(
        (c) => c.type === 'function' && [c.function.name, JSON.parse(c.function.arguments)],
      ),
    ).toEqual([
      ['get_weather', { city: 'ok', days: 42 }],
      ['get_time', { zone: 'ok' }],
    ]);
    messages.push(message);
    for (const call of message.tool_calls!)
      messages.push({ role: 'tool', tool_call_id: call.id, content: `result of ${call.id}` });
    const second = await client.chat.completions.create({ model: 'gpt-x', messages, tools });
    expect(second.choices[0]!.message.content).toBe(
      'Tool results: result of call_mock0Ab3xYz | result of call_mock1Ab3xYz',
    );
  });

  test('structured output parsed by the SDK', async () => {
    const answer = await client.chat.completions.parse({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'a city' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'city', schema: weather.schema, strict: true },
      },
    });
    expect(answer.choices[0]!.message.parsed).toEqual({ city: 'ok', days: 42 });
  });

  test('reasoning as a compatible server streams it (reasoning_content), counted in the usage', async () => {
    const answer = await client.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'think' }],
      reasoning_effort: 'low',
    });
    expect((answer.choices[0]!.message as unknown as { reasoning_content: string }).reasoning_content).toBe(
      THINKING,
    );
    expect(answer.usage!.completion_tokens_details!.reasoning_tokens).toBe(10);
  });

  test('errors in OpenAI’s shape: the SDK raises its own classes', async () => {
    await expect(
      client.chat.completions.create({
        model: 'gpt-x',
        messages: [{ role: 'user', content: '[mock:fail=429]' }],
      }),
    ).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    const bad = client.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: 'hi' }],
      bogus: 1,
    } as never);
    await expect(bad).rejects.toMatchObject({ status: 400, error: { type: 'invalid_request_error' } });
    const orphan = client.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'tool', tool_call_id: 'x', content: 'r' }],
    });
    await expect(orphan).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const stream = await client.chat.completions.create({
      model: 'gpt-x',
      messages: [{ role: 'user', content: '[mock:stream-fail]' }],
      stream: true,
    });
    await expect(
      (async () => {
        for await (const _ of stream) void _;
      })(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
  });
});

describe('the messages mock, through @anthropic-ai/sdk', () => {
  let mock: FormatMock;
  let client: Anthropic;
  beforeAll(async () => {
    mock = await new FormatMock('messages').start();
    client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0 });
  });
  afterAll(() => mock.stop());

  const tools: Anthropic.Tool[] = [weather, time].map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.schema as Anthropic.Tool.InputSchema,
  }));

  test('a JSON answer with usage (cache reads apart from input)', async () => {
    const answer = await client.messages.create({
      model: 'claude-x',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi [mock:cached=3]' }],
    });
    expect(answer.content).toEqual([
      { type: 'text', text: 'Hello from the messages mock. You said: hi', citations: null },
    ]);
    expect(answer.stop_reason).toBe('end_turn');
    expect(answer.usage.cache_read_input_tokens).toBe(3);
    expect(answer.usage.output_tokens).toBe(8);
    expect(mock.last().headers['anthropic-version']).toBe('2026-10-21');
  });

  test('a stream with signed thinking and parallel tool calls, then their results', async () => {
    const messages: Anthropic.MessageParam[] = [
      { role: 'user', content: 'weather and time [mock:parallel]' },
    ];
    const stream = client.messages.stream({
      model: 'claude-x',
      max_tokens: 4000,
      messages,
      tools,
      thinking: { type: 'enabled', budget_tokens: 2000 },
    });
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content[0]).toEqual({ type: 'thinking', thinking: THINKING, signature: SIGNATURE });
    expect(final.content.slice(1).map((b) => b.type === 'tool_use' && [b.name, b.input])).toEqual([
      ['get_weather', { city: 'ok', days: 42 }],
      ['get_time', { zone: 'ok' }],
    ]);
    expect(final.usage.output_tokens_details?.thinking_tokens).toBe(10);
    expect(events[0]).toBe('message_start');
    expect(events[events.length - 1]).toBe('message_stop');
    messages.push({ role: 'assistant', content: final.content });
    messages.push({
      role: 'user',
      content: final.content.flatMap((b) =>
        b.type === 'tool_use'
          ? [{ type: 'tool_result' as const, tool_use_id: b.id, content: `result of ${b.name}` }]
          : [],
      ),
    });
    const second = await client.messages.create({
      model: 'claude-x',
      max_tokens: 4000,
      messages,
      tools,
      thinking: { type: 'enabled', budget_tokens: 2000 },
    });
    expect(second.content.find((b) => b.type === 'text')).toMatchObject({
      text: 'Tool results: result of get_weather | result of get_time',
    });
  });

  test('structured output and a stop sequence', async () => {
    const answer = await client.messages.create({
      model: 'claude-x',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'a city' }],
      output_config: { format: { type: 'json_schema', schema: weather.schema } },
    });
    expect(JSON.parse((answer.content[0] as Anthropic.TextBlock).text)).toEqual({ city: 'ok', days: 42 });
    const stopped = await client.messages.create({
      model: 'claude-x',
      max_tokens: 100,
      stop_sequences: ['mock'],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(stopped).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'mock',
      content: [{ text: 'Hello from the messages ' }],
    });
  });

  test('token counting', async () => {
    const counted = await client.messages.countTokens({
      model: 'claude-x',
      messages: [{ role: 'user', content: 'count me' }],
    });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });

  test('errors in Anthropic’s shape, as the API version 2026-10-21 refuses sampling parameters', async () => {
    await expect(
      client.messages.create({
        model: 'claude-x',
        max_tokens: 10,
        messages: [{ role: 'user', content: '[mock:fail=529]' }],
      }),
    ).rejects.toMatchObject({
      status: 529,
      error: { type: 'error', error: { type: 'overloaded_error' } },
    });
    const sampled = client.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.5,
    } as never);
    await expect(sampled).rejects.toMatchObject({
      status: 400,
      error: { error: { message: 'temperature: Extra inputs are not permitted' } },
    });
    const unpaired = client.messages.create({
      model: 'claude-x',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_time', input: {} }] },
        { role: 'user', content: 'no result' },
      ],
    });
    await expect(unpaired).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const stream = client.messages.stream({
      model: 'claude-x',
      max_tokens: 10,
      messages: [{ role: 'user', content: '[mock:stream-fail]' }],
    });
    await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError);
  });
});

describe('the generateContent mock, through @google/genai', () => {
  let mock: FormatMock;
  let ai: GoogleGenAI;
  beforeAll(async () => {
    mock = await new FormatMock('generate').start();
    ai = new GoogleGenAI({ apiKey: 'g-test', httpOptions: { baseUrl: mock.url } });
  });
  afterAll(() => mock.stop());

  const functionDeclarations = [weather, time].map((t) => ({
    name: t.name,
    description: t.description,
    parametersJsonSchema: t.schema,
  }));

  test('a JSON answer with usage', async () => {
    const answer = await ai.models.generateContent({ model: 'gemini-x', contents: 'hi [mock:cached=3]' });
    expect(answer.text).toBe('Hello from the generate mock. You said: hi');
    expect(answer.candidates![0]!.finishReason).toBe('STOP');
    expect(answer.usageMetadata).toMatchObject({ cachedContentTokenCount: 3, candidatesTokenCount: 8 });
  });

  test('a stream, chunk by chunk, with thoughts when asked', async () => {
    const chunks = [];
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-x',
      contents: 'hello there',
      config: { thinkingConfig: { includeThoughts: true } },
    })) {
      chunks.push(chunk);
    }
    expect(chunks.map((c) => c.text ?? '').join('')).toBe(
      'Hello from the generate mock. You said: hello there',
    );
    expect(chunks[0]!.candidates![0]!.content!.parts![0]).toEqual({
      text: THINKING.slice(0, 12),
      thought: true,
    });
    expect(chunks[chunks.length - 1]!.usageMetadata).toMatchObject({
      thoughtsTokenCount: 10,
      candidatesTokenCount: 9,
    });
  });

  test('parallel function calls with a thought signature, answered on the next turn of a chat', async () => {
    const chat = ai.chats.create({ model: 'gemini-x', config: { tools: [{ functionDeclarations }] } });
    const first = await chat.sendMessage({ message: 'weather and time [mock:parallel]' });
    expect(first.functionCalls).toEqual([
      { name: 'get_weather', args: { city: 'ok', days: 42 } },
      { name: 'get_time', args: { zone: 'ok' } },
    ]);
    expect(first.candidates![0]!.content!.parts![0]!.thoughtSignature).toBe(THOUGHT_SIGNATURE);
    const second = await chat.sendMessage({
      message: first.functionCalls!.map((c) => ({
        functionResponse: { name: c.name, response: { output: `result of ${c.name}` } },
      })),
    });
    expect(second.text).toBe('Tool results: result of get_weather | result of get_time');
  });

  test('a missing thought signature on the current turn’s call is refused, as Gemini 3 does', async () => {
    const contents: Content[] = [
      { role: 'user', parts: [{ text: 'weather' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }] },
    ];
    await expect(
      ai.models.generateContent({
        model: 'gemini-x',
        contents,
        config: { tools: [{ functionDeclarations }] },
      }),
    ).rejects.toMatchObject({
      status: 400,
    });
  });

  test('JSON output by schema, and token counting', async () => {
    const answer = await ai.models.generateContent({
      model: 'gemini-x',
      contents: 'a city',
      config: { responseMimeType: 'application/json', responseJsonSchema: weather.schema },
    });
    expect(JSON.parse(answer.text!)).toEqual({ city: 'ok', days: 42 });
    const counted = await ai.models.countTokens({ model: 'gemini-x', contents: 'count me' });
    expect(counted.totalTokens).toBeGreaterThan(0);
  });

  test('the stream without alt=sse is one JSON array', async () => {
    const res = await fetch(`${mock.url}/v1beta/models/gemini-x:streamGenerateContent`, {
      method: 'POST',
      headers: { 'x-goog-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    const chunks = (await res.json()) as { candidates: { content: { parts: { text: string }[] } }[] }[];
    expect(chunks.map((c) => c.candidates[0]!.content.parts[0]!.text).join('')).toBe(
      'Hello from the generate mock. You said: hi',
    );
  });

  test('errors in Google’s shape: the SDK raises ApiError with the status', async () => {
    await expect(
      ai.models.generateContent({ model: 'gemini-x', contents: '[mock:fail=429]' }),
    ).rejects.toMatchObject({ status: 429 });
    await expect(
      ai.models.generateContent({ model: 'gemini-x', contents: '[mock:fail=400]' }),
    ).rejects.toBeInstanceOf(ApiError);
    const stream = ai.models.generateContentStream({
      model: 'gemini-x',
      contents: '[mock:stream-fail] hello there',
    });
    await expect(
      (async () => {
        for await (const _ of await stream) void _;
      })(),
    ).rejects.toMatchObject({ status: 503 });
  });
});
