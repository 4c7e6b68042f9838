/**
 * The frameworks as callers through the translation layer, against mocks of every other format: the AI SDK (each of
 * its providers, in a real Node process: it is ESM only) and LangChain JS (ChatOpenAI over chat completions and over
 * Responses, ChatAnthropic). Text, a stream, tools over two turns, and structured output.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { FormatMock, type Format } from '../helpers/format-mocks';
import { TranslatingProxy } from '../helpers/format-mocks/translating-proxy';

const FORMATS: Format[] = ['chat', 'messages', 'generate'];
const up: Record<string, { mock: FormatMock; proxy: TranslatingProxy }> = {};

beforeAll(async () => {
  for (const f of FORMATS) {
    const mock = await new FormatMock(f).start();
    up[f] = { mock, proxy: await new TranslatingProxy(mock).start() };
  }
});
afterAll(async () => {
  for (const f of FORMATS) {
    await up[f]!.proxy.stop();
    await up[f]!.mock.stop();
  }
});

const weather = {
  name: 'get_weather',
  description: 'The weather in a city',
  schema: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city', 'days'],
    additionalProperties: false,
  },
};

describe('the AI SDK', () => {
  interface Line {
    caller: string;
    target: Format;
    scenario: string;
    result?: Record<string, unknown>;
    error?: string;
  }
  let lines: Line[] = [];

  beforeAll(async () => {
    const script = path.join(__dirname, '../helpers/format-mocks/ai-sdk-caller.mjs');
    const targets = Object.fromEntries(FORMATS.map((f) => [f, up[f]!.proxy.url]));
    const { stdout } = await promisify(execFile)(process.execPath, [script], {
      env: { ...process.env, TARGETS: JSON.stringify(targets) },
      timeout: 120_000,
    });
    lines = stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  }, 150_000);

  const CASES: [string, Format][] = [
    ['openai.chat', 'messages'],
    ['openai.chat', 'generate'],
    ['openai.responses', 'chat'],
    ['openai.responses', 'messages'],
    ['openai.responses', 'generate'],
    ['anthropic', 'chat'],
    ['anthropic', 'generate'],
    ['google', 'chat'],
    ['google', 'messages'],
  ];
  const line = (caller: string, target: Format, scenario: string) => {
    const found = lines.find((l) => l.caller === caller && l.target === target && l.scenario === scenario);
    if (!found) throw new Error(`no ${scenario} line for ${caller} to ${target}`);
    if (found.error) throw new Error(`${caller} to ${target}, ${scenario}: ${found.error}`);
    return found.result!;
  };

  test.each(CASES)('%s to a %s upstream: text, with usage', (caller, target) => {
    expect(line(caller, target, 'text')).toEqual({
      text: `Hello from the ${target} mock. You said: hi`,
      finishReason: 'stop',
      usage: { inputTokens: expect.any(Number), outputTokens: 8 },
    });
  });

  test.each(CASES)('%s to a %s upstream: a stream', (caller, target) => {
    const result = line(caller, target, 'stream');
    expect(result).toMatchObject({
      text: `Hello from the ${target} mock. You said: hello there`,
      usage: { outputTokens: 9 },
    });
    expect(result.parts).toBeGreaterThan(2);
  });

  test.each(CASES)(
    '%s to a %s upstream: a tool called, its result answered in a second step',
    (caller, target) => {
      // The AI SDK's Google provider answers a call with `{name, content}`: other formats get it as JSON text.
      const result = caller === 'google' ? '{"name":"get_weather","content":"sunny"}' : 'sunny';
      expect(line(caller, target, 'tools')).toEqual({
        text: `Tool results: ${result}`,
        calls: [{ city: 'ok', days: 42 }],
        steps: 2,
      });
    },
  );

  test.each(CASES)('%s to a %s upstream: an object output', (caller, target) => {
    expect(line(caller, target, 'object')).toEqual({ output: { city: 'ok', days: 42 } });
  });
});

describe.each([
  [
    'ChatOpenAI (chat completions)',
    'chat',
    (url: string) =>
      new ChatOpenAI({ model: 'route', apiKey: 'k', maxRetries: 0, configuration: { baseURL: `${url}/v1` } }),
  ],
  [
    'ChatOpenAI (Responses)',
    'responses',
    (url: string) =>
      new ChatOpenAI({
        model: 'route',
        apiKey: 'k',
        maxRetries: 0,
        useResponsesApi: true,
        configuration: { baseURL: `${url}/v1` },
      }),
  ],
  [
    'ChatAnthropic',
    'messages',
    (url: string) => new ChatAnthropic({ model: 'route', apiKey: 'k', maxRetries: 0, anthropicApiUrl: url }),
  ],
] as const)('LangChain %s', (_name, format, make) => {
  const targets = FORMATS.filter((f) => f !== format);

  test.each(targets)(
    'to a %s upstream: text, a stream, tools over two turns, structured output',
    async (target) => {
      const model = make(up[target]!.proxy.url);
      const answer = await model.invoke('hi');
      expect(answer.text).toBe(`Hello from the ${target} mock. You said: hi`);
      expect(answer.usage_metadata).toMatchObject({ output_tokens: 8 });

      let streamed = '';
      for await (const chunk of await model.stream('hello there')) streamed += chunk.text;
      expect(streamed).toBe(`Hello from the ${target} mock. You said: hello there`);

      const withTools = model.bindTools([
        {
          type: 'function',
          function: { name: weather.name, description: weather.description, parameters: weather.schema },
        },
      ]);
      const history: BaseMessage[] = [new HumanMessage('weather [mock:tool]')];
      const call = (await withTools.invoke(history)) as AIMessage;
      expect(call.tool_calls!.map((c) => [c.name, c.args])).toEqual([
        ['get_weather', { city: 'ok', days: 42 }],
      ]);
      history.push(call, new ToolMessage({ tool_call_id: call.tool_calls![0]!.id!, content: 'sunny' }));
      expect((await withTools.invoke(history)).text).toBe('Tool results: sunny');

      const structured = model.withStructuredOutput(weather.schema, { name: 'city', method: 'jsonSchema' });
      expect(await structured.invoke('a city')).toEqual({ city: 'ok', days: 42 });
    },
  );
});
