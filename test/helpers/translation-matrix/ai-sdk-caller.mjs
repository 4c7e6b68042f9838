// The AI SDK (`ai` with @ai-sdk/openai `.chat()` and Responses, @ai-sdk/anthropic, @ai-sdk/google) as a caller of
// Genway, for test/e2e/translation-frameworks.test.ts. It is ESM only, so it runs in a child process forked with an
// IPC channel: each message {id, caller, base, key, route, scenario} runs one scenario against that route and is
// answered {id, result} or {id, error: {name, message, statusCode, isRetryable}}.
import { APICallError, generateText, jsonSchema, Output, stepCountIs, streamText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const MODELS = {
  'ai.openai.chat': ({ base, key, route }) =>
    createOpenAI({ baseURL: `${base}/v1`, apiKey: key }).chat(route),
  'ai.openai.responses': ({ base, key, route }) =>
    createOpenAI({ baseURL: `${base}/v1`, apiKey: key })(route),
  'ai.anthropic': ({ base, key, route }) => createAnthropic({ baseURL: `${base}/v1`, apiKey: key })(route),
  'ai.google': ({ base, key, route }) =>
    createGoogleGenerativeAI({ baseURL: `${base}/v1beta`, apiKey: key })(route),
};

const city = jsonSchema({
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' } },
  required: ['city', 'days'],
  additionalProperties: false,
});

const usage = (u) => ({ inputTokens: u.inputTokens, outputTokens: u.outputTokens });

/**
 * The AI SDK downloads an image URL its provider does not pass on (Google's takes only its own storage's): this
 * machine has no internet, so such a download is answered with the same PNG's bytes here, as the web would have.
 */
const download = async (requests) =>
  requests.map(({ isUrlSupportedByModel }) =>
    isUrlSupportedByModel ? null : { data: Buffer.from(PNG, 'base64'), mediaType: 'image/png' },
  );

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
  async images(model) {
    const r = await generateText({
      model,
      maxRetries: 0,
      experimental_download: download,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image', image: PNG, mediaType: 'image/png' },
            { type: 'image', image: new URL('https://example.com/cat.png'), mediaType: 'image/png' },
          ],
        },
      ],
    });
    return { text: r.text };
  },
  async json(model) {
    const r = await generateText({
      model,
      prompt: 'a city',
      maxRetries: 0,
      output: Output.object({ schema: city }),
    });
    return { output: r.output };
  },
  async errors(model) {
    const failed = await generateText({ model, prompt: '[mock:fail=429]', maxRetries: 0 }).then(
      () => 'answered',
      (e) => described(e),
    );
    let broken;
    const r = streamText({
      model,
      prompt: '[mock:stream-fail] hello there',
      maxRetries: 0,
      onError: ({ error }) => (broken = error),
    });
    for await (const _ of r.textStream) void _;
    return { failed, broken: broken ? described(broken) : 'no error' };
  },
};

function described(e) {
  return {
    name: e?.name,
    apiCallError: APICallError.isInstance(e),
    message: String(e?.message ?? e).slice(0, 500),
    statusCode: e?.statusCode,
    isRetryable: e?.isRetryable,
  };
}

process.on('message', async ({ id, caller, base, key, route, scenario }) => {
  try {
    const result = await SCENARIOS[scenario](MODELS[caller]({ base, key, route }));
    process.send({ id, result });
  } catch (e) {
    process.send({ id, error: described(e) });
  }
});
process.send({ ready: true });
