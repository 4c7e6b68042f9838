// The AI SDK (`ai` with @ai-sdk/openai `.chat` and responses, @ai-sdk/anthropic, @ai-sdk/google) as a caller of
// translating proxies (test/helpers/format-mocks/translating-proxy.ts), one per target format. ESM only, so
// test/unit/translate-frameworks.test.ts runs it in a real Node process. TARGETS (env) maps each target format to its
// proxy; for every provider whose format differs from a target it runs text, a stream, tools over two steps and an
// object output, and prints one JSON line per case: {caller, target, scenario, result | error}.
import { generateText, jsonSchema, Output, stepCountIs, streamText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

const targets = JSON.parse(process.env.TARGETS);

const CALLERS = {
  'openai.chat': {
    format: 'chat',
    model: (url) => createOpenAI({ baseURL: `${url}/v1`, apiKey: 'k' }).chat('route'),
  },
  'openai.responses': {
    format: 'responses',
    model: (url) => createOpenAI({ baseURL: `${url}/v1`, apiKey: 'k' })('route'),
  },
  anthropic: {
    format: 'messages',
    model: (url) => createAnthropic({ baseURL: `${url}/v1`, apiKey: 'k' })('route'),
  },
  google: {
    format: 'generate',
    model: (url) => createGoogleGenerativeAI({ baseURL: `${url}/v1beta`, apiKey: 'k' })('route'),
  },
};

const city = jsonSchema({
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' } },
  required: ['city', 'days'],
  additionalProperties: false,
});

const usage = (u) => ({ inputTokens: u.inputTokens, outputTokens: u.outputTokens });

const SCENARIOS = {
  async text(model) {
    const r = await generateText({ model, prompt: 'hi', maxRetries: 0 });
    return { text: r.text, finishReason: r.finishReason, usage: usage(r.usage) };
  },
  async stream(model) {
    let failure;
    const r = streamText({
      model,
      prompt: 'hello there',
      maxRetries: 0,
      onError: ({ error }) => (failure = error),
    });
    const parts = [];
    for await (const part of r.textStream) parts.push(part);
    if (failure) throw failure;
    return { parts: parts.length, text: await r.text, usage: usage(await r.usage) };
  },
  async tools(model) {
    const calls = [];
    const r = await generateText({
      model,
      prompt: 'weather in a city [mock:tool]',
      maxRetries: 0,
      stopWhen: stepCountIs(3),
      tools: {
        get_weather: tool({
          description: 'The weather in a city',
          inputSchema: city,
          execute: async (input) => {
            calls.push(input);
            return 'sunny';
          },
        }),
      },
    });
    return { text: r.text, calls, steps: r.steps.length };
  },
  async object(model) {
    const r = await generateText({
      model,
      prompt: 'a city',
      maxRetries: 0,
      output: Output.object({ schema: city }),
    });
    return { output: r.output };
  },
};

for (const [caller, { format, model }] of Object.entries(CALLERS)) {
  for (const [target, url] of Object.entries(targets)) {
    if (target === format) continue;
    for (const [scenario, run] of Object.entries(SCENARIOS)) {
      try {
        console.log(JSON.stringify({ caller, target, scenario, result: await run(model(url)) }));
      } catch (e) {
        console.log(
          JSON.stringify({ caller, target, scenario, error: String(e?.message ?? e).slice(0, 500) }),
        );
      }
    }
  }
}
