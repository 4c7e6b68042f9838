/**
 * The translation matrix's framework rows, through a real Genway (test/e2e/translation-matrix.test.ts has the official
 * SDKs and says how the matrix is built): the AI SDK with each of its providers (ESM only, so in a forked Node process,
 * test/helpers/translation-matrix/ai-sdk-caller.mjs) and LangChain JS's ChatOpenAI (chat completions and Responses) and
 * ChatAnthropic, each on routes to mocks of every other format. Every case checks what Genway metered and charged.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import type { Seen } from '../helpers/format-mocks';
import {
  FRAMEWORK_CALLERS,
  SCENARIOS,
  targetsOf,
  type MatrixCaller,
  type Scenario,
  type TargetFormat,
} from '../helpers/translation-matrix/cases';
import { partialOf, ROUTE, useMatrixGateway, type MatrixKey } from '../helpers/translation-matrix/gateway';

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
const WEATHER_ARGS = { city: 'ok', days: 42 };
const hello = (target: TargetFormat, said: string) => `Hello from the ${target} mock. You said: ${said}`;

const m = useMatrixGateway(false);

/** Runs one case on a fresh key: what it returned, and what the target's mock received meanwhile. */
async function run<T>(target: TargetFormat, call: (k: MatrixKey) => Promise<T>) {
  const k = await m.key();
  const mark = m.mark();
  const value = await call(k);
  return { k, value, seen: m.since(target, mark) };
}

/** The usage a case's mock reported, for the one request it made. */
const usageOf = (seen: Seen[]) => seen[seen.length - 1]!.usage!;

describe('the AI SDK', () => {
  let child: ChildProcess;
  const pending = new Map<number, (answer: AiAnswer) => void>();
  let next = 0;

  interface AiAnswer {
    result?: Record<string, unknown>;
    error?: { name: string; message: string; statusCode?: number };
  }

  beforeAll(async () => {
    child = fork(path.join(__dirname, '../helpers/translation-matrix/ai-sdk-caller.mjs'), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.on('message', (message: { id?: number; ready?: boolean } & AiAnswer) => {
        if (message.ready) return resolve();
        pending.get(message.id!)?.(message);
        pending.delete(message.id!);
      });
    });
  });
  afterAll(() => {
    child?.kill();
  });

  /** One scenario of the AI SDK's caller, in the child process; its result, or a thrown error described. */
  function ai(caller: string, k: MatrixKey, target: TargetFormat, scenario: Scenario) {
    const id = next++;
    return new Promise<Record<string, unknown>>((resolve, reject) => {
      pending.set(id, ({ result, error }) =>
        error ? reject(new Error(`${error.name}: ${error.message}`)) : resolve(result!),
      );
      child.send({ id, caller, base: m.gw.base, key: k.key, route: ROUTE[target], scenario });
    });
  }

  const cases = (
    caller: MatrixCaller,
    target: TargetFormat,
  ): Partial<Record<Scenario, () => Promise<void>>> => {
    const call = (scenario: Scenario) => run(target, (k) => ai(caller.id, k, target, scenario));
    return {
      async text() {
        const { k, value, seen } = await call('text');
        const u = usageOf(seen);
        expect(value).toEqual({
          text: hello(target, 'hi'),
          finishReason: 'stop',
          usage: { inputTokens: u.input, outputTokens: u.output },
        });
        await m.expectMetered(k, target, seen);
      },
      async stream() {
        const { k, value, seen } = await call('stream');
        expect(value).toMatchObject({
          text: hello(target, 'hello there'),
          usage: { inputTokens: usageOf(seen).input, outputTokens: 9 },
        });
        expect(value.parts).toBeGreaterThan(2);
        await m.expectMetered(k, target, seen);
      },
      async tools() {
        const { k, value, seen } = await call('tools');
        // The AI SDK's Google provider answers a call with `{name, content}`: other formats get it as JSON text.
        const result = caller.format === 'generate' ? '{"name":"get_weather","content":"sunny"}' : 'sunny';
        expect(value).toEqual({ text: `Tool results: ${result}`, calls: [WEATHER_ARGS], steps: 2 });
        expect(seen).toHaveLength(2);
        await m.expectMetered(k, target, seen);
      },
      async images() {
        const { k, value, seen } = await call('images');
        expect(value.text).toContain('I see 2 images.');
        await m.expectMetered(k, target, seen);
      },
      async json() {
        const { k, value, seen } = await call('json');
        expect(value).toEqual({ output: WEATHER_ARGS });
        await m.expectMetered(k, target, seen);
      },
      async errors() {
        const { k, value, seen } = await call('errors');
        expect(value.failed).toMatchObject({
          apiCallError: true,
          statusCode: 429,
          isRetryable: true,
          message: expect.stringContaining('upstream'),
        });
        expect(value.broken).toMatchObject({ message: expect.any(String) });
        // The 429 cost nothing; the broken stream its usage so far.
        await m.expectUsage(k, partialOf(target, seen.slice(-1)));
      },
    };
  };

  for (const caller of FRAMEWORK_CALLERS.filter((c) => c.id.startsWith('ai.'))) {
    describe(`${caller.id} caller`, () => {
      for (const target of targetsOf(caller)) {
        describe(`to a ${target} upstream`, () => {
          const implemented = cases(caller, target);
          for (const scenario of caller.scenarios) {
            test(`${scenario}: ${SCENARIOS[scenario]}`, async () => {
              const body = implemented[scenario];
              if (!body)
                throw new Error(`the case list names ${scenario} for ${caller.id}: no test implements it`);
              await body();
            });
          }
        });
      }
    });
  }
});

describe('LangChain JS', () => {
  const MAKE: Record<string, (k: MatrixKey, route: string) => BaseChatModel> = {
    'langchain.openai.chat': (k, route) =>
      new ChatOpenAI({
        model: route,
        apiKey: k.key,
        maxRetries: 0,
        configuration: { baseURL: `${m.gw.base}/v1` },
      }),
    'langchain.openai.responses': (k, route) =>
      new ChatOpenAI({
        model: route,
        apiKey: k.key,
        maxRetries: 0,
        useResponsesApi: true,
        configuration: { baseURL: `${m.gw.base}/v1` },
      }),
    'langchain.anthropic': (k, route) =>
      new ChatAnthropic({ model: route, apiKey: k.key, maxRetries: 0, anthropicApiUrl: m.gw.base }),
  };

  const cases = (
    caller: MatrixCaller,
    target: TargetFormat,
  ): Partial<Record<Scenario, () => Promise<void>>> => {
    const model = (k: MatrixKey) => MAKE[caller.id]!(k, ROUTE[target]);
    return {
      async text() {
        const { k, value, seen } = await run(target, (key) => model(key).invoke('hi'));
        const u = usageOf(seen);
        expect(value.text).toBe(hello(target, 'hi'));
        expect(value.usage_metadata).toMatchObject({ input_tokens: u.input, output_tokens: u.output });
        await m.expectMetered(k, target, seen);
      },
      async stream() {
        const { k, value, seen } = await run(target, async (key) => {
          let streamed = '';
          for await (const chunk of await model(key).stream('hello there')) streamed += chunk.text;
          return streamed;
        });
        expect(value).toBe(hello(target, 'hello there'));
        await m.expectMetered(k, target, seen);
      },
      async tools() {
        const { k, seen } = await run(target, async (key) => {
          const withTools = model(key).bindTools!([
            {
              type: 'function',
              function: { name: weather.name, description: weather.description, parameters: weather.schema },
            },
          ]);
          const history: BaseMessage[] = [new HumanMessage('weather [mock:tool]')];
          const call = (await withTools.invoke(history)) as AIMessage;
          expect(call.tool_calls!.map((c) => [c.name, c.args])).toEqual([['get_weather', WEATHER_ARGS]]);
          history.push(call, new ToolMessage({ tool_call_id: call.tool_calls![0]!.id!, content: 'sunny' }));
          expect((await withTools.invoke(history)).text).toBe('Tool results: sunny');
        });
        expect(seen).toHaveLength(2);
        await m.expectMetered(k, target, seen);
      },
      async json() {
        const { k, value, seen } = await run(target, (key) =>
          model(key)
            .withStructuredOutput(weather.schema, { name: 'city', method: 'jsonSchema' })
            .invoke('a city'),
        );
        expect(value).toEqual(WEATHER_ARGS);
        await m.expectMetered(k, target, seen);
      },
      async errors() {
        const k = await m.key();
        const failed = await model(k)
          .invoke('[mock:fail=429]')
          .then(
            () => undefined,
            (e: unknown) => e,
          );
        expect(failed).toMatchObject({ status: 429, message: expect.stringContaining('upstream') });
        const mark = m.mark();
        await expect(
          (async () => {
            for await (const _ of await model(k).stream('[mock:stream-fail] hello there')) void _;
          })(),
        ).rejects.toBeDefined();
        await m.expectUsage(k, partialOf(target, m.since(target, mark)));
      },
    };
  };

  for (const caller of FRAMEWORK_CALLERS.filter((c) => c.id.startsWith('langchain.'))) {
    describe(`${caller.id} caller`, () => {
      for (const target of targetsOf(caller)) {
        describe(`to a ${target} upstream`, () => {
          const implemented = cases(caller, target);
          for (const scenario of caller.scenarios) {
            test(`${scenario}: ${SCENARIOS[scenario]}`, async () => {
              const body = implemented[scenario];
              if (!body)
                throw new Error(`the case list names ${scenario} for ${caller.id}: no test implements it`);
              await body();
            });
          }
        });
      }
    });
  }
});
