/**
 * Every caller format's real SDK against mock upstreams of every other format, through the translation layer alone
 * (test/helpers/format-mocks/translating-proxy.ts): the mock checks each translated request as its vendor would, the
 * SDK parses each translated answer. Text, streams, tools over two turns (parallel), images, JSON output, reasoning,
 * errors, usage and token counts.
 */
import Anthropic from '@anthropic-ai/sdk';
import type * as GenAI from '@google/genai' with { 'resolution-mode': 'import' };
import OpenAI from 'openai';
// Defines the fetch dispatcher in the test's realm, where @google/genai looks for it.
import 'undici';
import { FormatMock, SIGNATURE, THINKING, type Format } from '../helpers/format-mocks';
import { TranslatingProxy } from '../helpers/format-mocks/translating-proxy';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { GoogleGenAI } = require('@google/genai') as typeof GenAI;

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

/** A mock of `format` and the translation in front of it, for one describe block. */
function upstream(format: Format) {
  const ctx = {} as { mock: FormatMock; proxy: TranslatingProxy };
  beforeAll(async () => {
    ctx.mock = await new FormatMock(format).start();
    ctx.proxy = await new TranslatingProxy(ctx.mock).start();
  });
  afterAll(async () => {
    await ctx.proxy.stop();
    await ctx.mock.stop();
  });
  return ctx;
}

/** The input tokens the mock reported for the last request (its body length / 4), however each format counts them. */
const inputOf = (mock: FormatMock) => Math.max(1, Math.round(mock.last().body.length / 4));

describe.each(['messages', 'generate'] as const)(
  'an openai SDK chat completions caller, to a %s upstream',
  (target) => {
    const up = upstream(target);
    const client = () => new OpenAI({ apiKey: 'k', baseURL: `${up.proxy.url}/v1`, maxRetries: 0 });
    const tools: OpenAI.ChatCompletionTool[] = [weather, time].map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.schema },
    }));

    test('text, with usage (cache reads inside prompt tokens)', async () => {
      const answer = await client().chat.completions.create({
        model: 'route-a',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi [mock:cached=3]' },
        ],
      });
      expect(answer.model).toBe('route-a');
      expect(answer.choices[0]!.message.content).toBe(`Hello from the ${target} mock. You said: hi`);
      expect(answer.choices[0]!.finish_reason).toBe('stop');
      expect(answer.usage).toMatchObject({
        prompt_tokens: inputOf(up.mock),
        completion_tokens: 8,
        prompt_tokens_details: { cached_tokens: 3 },
      });
      const sent = up.mock.last().json!;
      if (target === 'messages')
        expect(sent).toMatchObject({
          model: 'target-model',
          max_tokens: 8192,
          system: [{ type: 'text', text: 'Be brief.' }],
        });
      else expect(sent.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    });

    test('a stream: chunks the SDK accumulates, the usage chunk only when asked', async () => {
      const stream = client().chat.completions.stream({
        model: 'route-a',
        messages: [{ role: 'user', content: 'hello there' }],
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      const final = await stream.finalChatCompletion();
      expect(final.choices[0]!.message.content).toBe(`Hello from the ${target} mock. You said: hello there`);
      expect(final.usage).toMatchObject({ prompt_tokens: inputOf(up.mock), completion_tokens: 9 });
      expect(chunks[chunks.length - 1]!.choices).toEqual([]);
      const plain = await client().chat.completions.create({
        model: 'route-a',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
      });
      const seen: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of plain) seen.push(chunk);
      expect(seen.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
    });

    test('parallel tool calls, streamed, then their results on a second turn', async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'user', content: 'weather and time [mock:parallel]' },
      ];
      const stream = client().chat.completions.stream({ model: 'route-a', messages, tools });
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
      for (const call of message.tool_calls!) {
        messages.push({
          role: 'tool',
          tool_call_id: call.id,
          content: `result of ${call.type === 'function' ? call.function.name : ''}`,
        });
      }
      const second = await client().chat.completions.create({ model: 'route-a', messages, tools });
      expect(second.choices[0]!.message.content).toBe(
        'Tool results: result of get_weather | result of get_time',
      );
    });

    test('images: a data: URL and an http URL', async () => {
      const answer = await client().chat.completions.create({
        model: 'route-a',
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

    test('JSON output by schema, parsed by the SDK', async () => {
      const answer = await client().chat.completions.parse({
        model: 'route-a',
        messages: [{ role: 'user', content: 'a city' }],
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'city', schema: weather.schema, strict: true },
        },
      });
      expect(answer.choices[0]!.message.parsed).toEqual({ city: 'ok', days: 42 });
    });

    test('reasoning effort: the thinking comes back as reasoning_content', async () => {
      const answer = await client().chat.completions.create({
        model: 'route-a',
        messages: [{ role: 'user', content: 'think' }],
        reasoning_effort: 'low',
      });
      const message = answer.choices[0]!.message as unknown as { reasoning_content: string };
      expect(message.reasoning_content).toBe(THINKING);
      expect(answer.usage!.completion_tokens_details!.reasoning_tokens).toBe(10);
    });

    test('errors: the upstream’s in the caller’s shape and status, and refusals naming the field', async () => {
      const failed = client().chat.completions.create({
        model: 'route-a',
        messages: [{ role: 'user', content: '[mock:fail=429]' }],
      });
      await expect(failed).rejects.toBeInstanceOf(OpenAI.RateLimitError);
      await expect(failed).rejects.toMatchObject({ message: expect.stringContaining('upstream') });
      const audio = client().chat.completions.create({
        model: 'route-a',
        messages: [
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
        ],
      });
      await expect(audio).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('messages[0].content[0].type'),
      });
      const stream = await client().chat.completions.create({
        model: 'route-a',
        messages: [{ role: 'user', content: '[mock:stream-fail] hello there' }],
        stream: true,
      });
      await expect(
        (async () => {
          for await (const _ of stream) void _;
        })(),
      ).rejects.toBeInstanceOf(OpenAI.APIError);
    });
  },
);

describe.each(['chat', 'generate'] as const)(
  'an @anthropic-ai/sdk messages caller, to a %s upstream',
  (target) => {
    const up = upstream(target);
    const client = () => new Anthropic({ apiKey: 'k', baseURL: up.proxy.url, maxRetries: 0 });
    const tools: Anthropic.Tool[] = [weather, time].map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.schema as Anthropic.Tool.InputSchema,
    }));

    test('text, with usage (cache reads apart from input)', async () => {
      const answer = await client().messages.create({
        model: 'route-b',
        max_tokens: 200,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'hi [mock:cached=3]' }],
      });
      expect(answer.model).toBe('route-b');
      expect(answer.content).toEqual([
        { type: 'text', text: `Hello from the ${target} mock. You said: hi`, citations: null },
      ]);
      expect(answer.stop_reason).toBe('end_turn');
      expect(answer.usage).toMatchObject({
        input_tokens: inputOf(up.mock) - 3,
        cache_read_input_tokens: 3,
        output_tokens: 8,
      });
    });

    test('a stream: message_start … message_stop, as the SDK accumulates it', async () => {
      const stream = client().messages.stream({
        model: 'route-b',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'hello there' }],
      });
      const types: string[] = [];
      stream.on('streamEvent', (e) => types.push(e.type));
      const final = await stream.finalMessage();
      expect(final.content).toEqual([
        { type: 'text', text: `Hello from the ${target} mock. You said: hello there`, citations: null },
      ]);
      expect(final.usage).toMatchObject({ input_tokens: inputOf(up.mock), output_tokens: 9 });
      expect(types[0]).toBe('message_start');
      expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    });

    test('parallel tool calls, streamed as input_json_delta, then their results on a second turn', async () => {
      const messages: Anthropic.MessageParam[] = [
        { role: 'user', content: 'weather and time [mock:parallel]' },
      ];
      const final = await client()
        .messages.stream({ model: 'route-b', max_tokens: 200, messages, tools })
        .finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      const uses = final.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
      expect(uses.map((b) => [b.name, b.input])).toEqual([
        ['get_weather', { city: 'ok', days: 42 }],
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
      const second = await client().messages.create({ model: 'route-b', max_tokens: 200, messages, tools });
      expect(second.content).toEqual([
        { type: 'text', text: 'Tool results: result of get_weather | result of get_time', citations: null },
      ]);
    });

    test('images: base64 and url sources', async () => {
      const answer = await client().messages.create({
        model: 'route-b',
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

    test('JSON output by schema (output_config.format)', async () => {
      const answer = await client().messages.create({
        model: 'route-b',
        max_tokens: 200,
        messages: [{ role: 'user', content: 'a city' }],
        output_config: { format: { type: 'json_schema', schema: weather.schema } },
      });
      expect(JSON.parse((answer.content[0] as Anthropic.TextBlock).text)).toEqual({ city: 'ok', days: 42 });
    });

    test('thinking: a budget asks the target to reason, its reasoning comes back as a thinking block', async () => {
      const answer = await client().messages.create({
        model: 'route-b',
        max_tokens: 4000,
        thinking: { type: 'enabled', budget_tokens: 2000 },
        messages: [{ role: 'user', content: 'think' }],
      });
      expect(answer.content[0]).toMatchObject({ type: 'thinking', thinking: THINKING });
      expect(answer.usage.output_tokens_details).toEqual({ thinking_tokens: 10 });
      const sent = up.mock.last().json!;
      if (target === 'chat') expect(sent.reasoning_effort).toBe('low');
      else
        expect((sent.generationConfig as Record<string, unknown>).thinkingConfig).toEqual({
          thinkingBudget: 2000,
          includeThoughts: true,
        });
    });

    test('token counting', async () => {
      const counting = client().messages.countTokens({
        model: 'route-b',
        messages: [{ role: 'user', content: 'count me' }],
      });
      if (target === 'chat') {
        await expect(counting).rejects.toMatchObject({
          status: 400,
          error: { error: { type: 'invalid_request_error' } },
        });
      } else {
        expect((await counting).input_tokens).toBe(inputOf(up.mock));
      }
    });

    test('errors: the upstream’s in the caller’s shape and status, and refusals naming the field', async () => {
      await expect(
        client().messages.create({
          model: 'route-b',
          max_tokens: 10,
          messages: [{ role: 'user', content: '[mock:fail=429]' }],
        }),
      ).rejects.toBeInstanceOf(Anthropic.RateLimitError);
      const server = client().messages.create({
        model: 'route-b',
        max_tokens: 10,
        tools: [{ type: 'web_search_20250305', name: 'web_search' }],
        messages: [{ role: 'user', content: 'hi' }],
      });
      await expect(server).rejects.toMatchObject({
        status: 400,
        error: { error: { message: expect.stringContaining('tools[0].type') } },
      });
      const stream = client().messages.stream({
        model: 'route-b',
        max_tokens: 10,
        messages: [{ role: 'user', content: '[mock:stream-fail] hello there' }],
      });
      await expect(stream.finalMessage()).rejects.toBeInstanceOf(Anthropic.APIError);
    });
  },
);

describe.each(['chat', 'messages'] as const)('a @google/genai caller, to a %s upstream', (target) => {
  const up = upstream(target);
  const ai = () => new GoogleGenAI({ apiKey: 'k', httpOptions: { baseUrl: up.proxy.url } });
  const functionDeclarations = [weather, time].map((t) => ({
    name: t.name,
    description: t.description,
    parametersJsonSchema: t.schema,
  }));

  test('text, with usage (cached tokens inside the prompt count)', async () => {
    const answer = await ai().models.generateContent({
      model: 'route-c',
      contents: 'hi [mock:cached=3]',
      config: { systemInstruction: 'Be brief.' },
    });
    expect(answer.text).toBe(`Hello from the ${target} mock. You said: hi`);
    expect(answer.modelVersion).toBe('route-c');
    expect(answer.usageMetadata).toMatchObject({
      promptTokenCount: inputOf(up.mock),
      cachedContentTokenCount: 3,
      candidatesTokenCount: 8,
    });
  });

  test('a stream, chunk by chunk, usage and finish reason on the last', async () => {
    const chunks: GenAI.GenerateContentResponse[] = [];
    for await (const chunk of await ai().models.generateContentStream({
      model: 'route-c',
      contents: 'hello there',
    }))
      chunks.push(chunk);
    expect(chunks.map((c) => c.text ?? '').join('')).toBe(
      `Hello from the ${target} mock. You said: hello there`,
    );
    const last = chunks[chunks.length - 1]!;
    expect(last.candidates![0]!.finishReason).toBe('STOP');
    expect(last.usageMetadata).toMatchObject({ promptTokenCount: inputOf(up.mock), candidatesTokenCount: 9 });
    expect(chunks.length).toBeGreaterThan(3);
  });

  test('parallel function calls in a chat, answered on the next turn', async () => {
    const chat = ai().chats.create({ model: 'route-c', config: { tools: [{ functionDeclarations }] } });
    const chunks: GenAI.GenerateContentResponse[] = [];
    for await (const chunk of await chat.sendMessageStream({ message: 'weather and time [mock:parallel]' }))
      chunks.push(chunk);
    const calls = chunks.flatMap((c) => c.functionCalls ?? []);
    expect(calls.map((c) => [c.name, c.args])).toEqual([
      ['get_weather', { city: 'ok', days: 42 }],
      ['get_time', { zone: 'ok' }],
    ]);
    const second = await chat.sendMessage({
      message: calls.map((c) => ({
        functionResponse: { id: c.id, name: c.name, response: { output: `result of ${c.name}` } },
      })),
    });
    expect(second.text).toBe('Tool results: result of get_weather | result of get_time');
  });

  test('images and JSON output by schema', async () => {
    const seen = await ai().models.generateContent({
      model: 'route-c',
      contents: [
        {
          role: 'user',
          parts: [{ text: 'what is this' }, { inlineData: { mimeType: 'image/png', data: PNG } }],
        },
      ],
    });
    expect(seen.text).toContain('I see 1 image.');
    const answer = await ai().models.generateContent({
      model: 'route-c',
      contents: 'a city',
      config: { responseMimeType: 'application/json', responseJsonSchema: weather.schema },
    });
    expect(JSON.parse(answer.text!)).toEqual({ city: 'ok', days: 42 });
  });

  test('token counting', async () => {
    const counting = ai().models.countTokens({ model: 'route-c', contents: 'count me' });
    if (target === 'chat') await expect(counting).rejects.toMatchObject({ status: 400 });
    else expect((await counting).totalTokens).toBe(inputOf(up.mock));
  });

  test('errors: the upstream’s status through the SDK, and refusals naming the field', async () => {
    await expect(
      ai().models.generateContent({ model: 'route-c', contents: '[mock:fail=429]' }),
    ).rejects.toMatchObject({ status: 429 });
    const grounded = ai().models.generateContent({
      model: 'route-c',
      contents: 'hi',
      config: { tools: [{ googleSearch: {} }] },
    });
    await expect(grounded).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('tools[0].googleSearch'),
    });
  });
});

describe.each(['chat', 'messages', 'generate'] as const)(
  'an openai SDK Responses caller, to a %s upstream',
  (target) => {
    const up = upstream(target);
    const client = () => new OpenAI({ apiKey: 'k', baseURL: `${up.proxy.url}/v1`, maxRetries: 0 });
    const tools: OpenAI.Responses.FunctionTool[] = [weather, time].map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description,
      parameters: t.schema,
      strict: false,
    }));

    test('text, with usage', async () => {
      const answer = await client().responses.create({
        model: 'route-d',
        instructions: 'Be brief.',
        input: 'hi [mock:cached=3]',
      });
      expect(answer.output_text).toBe(`Hello from the ${target} mock. You said: hi`);
      expect(answer.status).toBe('completed');
      expect(answer.model).toBe('route-d');
      expect(answer.usage).toMatchObject({
        input_tokens: inputOf(up.mock),
        output_tokens: 8,
        input_tokens_details: { cached_tokens: 3 },
      });
    });

    test('a stream: created … completed, as the SDK’s stream helper accumulates it', async () => {
      const stream = client().responses.stream({ model: 'route-d', input: 'hello there' });
      const types: string[] = [];
      for await (const e of stream) types.push(e.type);
      const final = await stream.finalResponse();
      expect(final.output_text).toBe(`Hello from the ${target} mock. You said: hello there`);
      expect(final.usage).toMatchObject({ input_tokens: inputOf(up.mock), output_tokens: 9 });
      expect(types.slice(0, 4)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
      ]);
      expect(types[types.length - 1]).toBe('response.completed');
    });

    test('parallel function calls, streamed, then their outputs on a second turn', async () => {
      const input: OpenAI.Responses.ResponseInputItem[] = [
        { role: 'user', content: 'weather and time [mock:parallel]' },
      ];
      const final = await client().responses.stream({ model: 'route-d', input, tools }).finalResponse();
      const calls = final.output.flatMap((o) => (o.type === 'function_call' ? [o] : []));
      expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
        ['get_weather', { city: 'ok', days: 42 }],
        ['get_time', { zone: 'ok' }],
      ]);
      input.push(...(final.output as OpenAI.Responses.ResponseInputItem[]));
      for (const c of calls)
        input.push({ type: 'function_call_output', call_id: c.call_id, output: `result of ${c.name}` });
      const second = await client().responses.create({ model: 'route-d', input, tools });
      expect(second.output_text).toBe('Tool results: result of get_weather | result of get_time');
    });

    test('a free-form tool (Codex’s apply_patch): called with its input, streamed and not, answered on a second turn', async () => {
      const patch: OpenAI.Responses.CustomTool = {
        type: 'custom',
        name: 'apply_patch',
        description: 'Edit files',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: "*** Begin Patch" /(.|\\n)*/' },
      };
      const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'fix it [mock:tool]' }];
      const streamed = await client()
        .responses.stream({ model: 'route-d', input, tools: [patch] })
        .finalResponse();
      expect(streamed.output.map((o) => o.type === 'custom_tool_call' && [o.name, o.input])).toEqual([
        ['apply_patch', 'ok'],
      ]);
      const whole = await client().responses.create({ model: 'route-d', input, tools: [patch] });
      expect(whole.output).toMatchObject([{ type: 'custom_tool_call', name: 'apply_patch', input: 'ok' }]);
      const sent = up.mock.last().json!;
      expect(JSON.stringify(sent)).toContain('The input must follow this lark grammar');
      input.push(...(whole.output as OpenAI.Responses.ResponseInputItem[]));
      const call = whole.output[0] as OpenAI.Responses.ResponseCustomToolCall;
      input.push({ type: 'custom_tool_call_output', call_id: call.call_id, output: 'patched' });
      const second = await client().responses.create({ model: 'route-d', input, tools: [patch] });
      expect(second.output_text).toBe('Tool results: patched');
    });

    test('JSON output by schema (text.format), parsed by the SDK', async () => {
      const answer = await client().responses.parse({
        model: 'route-d',
        input: 'a city',
        text: { format: { type: 'json_schema', name: 'city', schema: weather.schema, strict: true } },
      });
      expect(answer.output_parsed).toEqual({ city: 'ok', days: 42 });
    });

    test('reasoning: summaries from the target’s thinking, signed in encrypted_content and sent back', async () => {
      const input: OpenAI.Responses.ResponseInputItem[] = [
        { role: 'user', content: 'think, weather [mock:tool]' },
      ];
      const first = await client().responses.create({
        model: 'route-d',
        input,
        tools,
        reasoning: { effort: 'low', summary: 'auto' },
        include: ['reasoning.encrypted_content'],
        store: false,
      });
      const reasoning = first.output.find((o) => o.type === 'reasoning');
      if (target === 'chat')
        expect(reasoning).toMatchObject({ summary: [{ type: 'summary_text', text: THINKING }] });
      if (target === 'messages')
        expect(reasoning).toMatchObject({ encrypted_content: SIGNATURE, summary: [{ text: THINKING }] });
      input.push(...(first.output as OpenAI.Responses.ResponseInputItem[]));
      for (const c of first.output)
        if (c.type === 'function_call')
          input.push({ type: 'function_call_output', call_id: c.call_id, output: 'sunny' });
      const second = await client().responses.create({
        model: 'route-d',
        input,
        tools,
        reasoning: { effort: 'low', summary: 'auto' },
        store: false,
      });
      expect(second.output_text).toBe('Tool results: sunny');
    });

    test('input token counting', async () => {
      const counting = client().responses.inputTokens.count({ model: 'route-d', input: 'count me' });
      if (target === 'chat') await expect(counting).rejects.toMatchObject({ status: 400 });
      else expect((await counting).input_tokens).toBe(inputOf(up.mock));
    });

    test('errors: the upstream’s in the caller’s shape, and refusals naming the field', async () => {
      await expect(
        client().responses.create({ model: 'route-d', input: '[mock:fail=429]' }),
      ).rejects.toBeInstanceOf(OpenAI.RateLimitError);
      const chained = client().responses.create({
        model: 'route-d',
        input: 'hi',
        previous_response_id: 'resp_1',
      });
      await expect(chained).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('previous_response_id'),
      });
      const search = client().responses.create({
        model: 'route-d',
        input: 'hi',
        tools: [{ type: 'web_search' }],
      });
      await expect(search).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('tools[0].type'),
      });
    });
  },
);
