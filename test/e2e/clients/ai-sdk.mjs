// The AI SDK (`ai` with @ai-sdk/openai, @ai-sdk/anthropic, @ai-sdk/google) pointed at Genway, as a user's app would
// be: base URL and key only. The packages are ESM only, which Jest's CommonJS runtime cannot load, so the test runs
// this file in a real Node process. It reads GENWAY_BASE and GENWAY_KEYS (scenario name → Genway key), runs every
// scenario, each with an `x-scenario` header naming it, and prints one JSON line per scenario.
import { generateText, streamText, embed, embedMany } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';

const base = process.env.GENWAY_BASE;
const keys = JSON.parse(process.env.GENWAY_KEYS);

const openai = (apiKey) => createOpenAI({ baseURL: `${base}/v1`, apiKey });
const anthropic = (apiKey) => createAnthropic({ baseURL: `${base}/v1`, apiKey });
const google = (apiKey) => createGoogleGenerativeAI({ baseURL: `${base}/v1beta`, apiKey });

const usage = (u) => ({
  inputTokens: u.inputTokens,
  outputTokens: u.outputTokens,
  totalTokens: u.totalTokens,
});

async function generate(model, headers) {
  const result = await generateText({ model, prompt: 'Hi', maxRetries: 0, headers });
  return { text: result.text, usage: usage(result.usage) };
}

async function stream(model, headers) {
  let failure;
  const result = streamText({
    model,
    prompt: 'Hi',
    maxRetries: 0,
    headers,
    onError: ({ error }) => (failure = error),
  });
  const parts = [];
  for await (const part of result.textStream) parts.push(part);
  if (failure) throw failure;
  return { parts, text: await result.text, usage: usage(await result.usage) };
}

const SCENARIOS = {
  'openai.chat generateText': (key, headers) => generate(openai(key).chat('gpt-test'), headers),
  'openai.chat streamText': (key, headers) => stream(openai(key).chat('gpt-test'), headers),
  'openai responses generateText': (key, headers) => generate(openai(key)('gpt-test'), headers),
  'openai responses streamText': (key, headers) => stream(openai(key)('gpt-test'), headers),
  'anthropic generateText': (key, headers) => generate(anthropic(key)('claude-test'), headers),
  'anthropic streamText': (key, headers) => stream(anthropic(key)('claude-test'), headers),
  'google generateText': (key, headers) => generate(google(key)('gemini-test'), headers),
  'google streamText': (key, headers) => stream(google(key)('gemini-test'), headers),
  'openai embed': async (key, headers) => {
    const r = await embed({
      model: openai(key).embedding('embed-test'),
      value: 'Hi',
      maxRetries: 0,
      headers,
    });
    return { embedding: r.embedding, usage: r.usage };
  },
  'google embed': async (key, headers) => {
    const r = await embed({
      model: google(key).embedding('embed-test'),
      value: 'Hi',
      maxRetries: 0,
      headers,
    });
    return { embedding: r.embedding };
  },
  'google embedMany': async (key, headers) => {
    const r = await embedMany({
      model: google(key).embedding('embed-test'),
      values: ['a', 'b'],
      maxRetries: 0,
      headers,
    });
    return { embeddings: r.embeddings };
  },
  'openai.chat with a wrong key': (_key, headers) => generate(openai('gw_wrong').chat('gpt-test'), headers),
  'anthropic with a wrong key': (_key, headers) => generate(anthropic('gw_wrong')('claude-test'), headers),
  'google with a wrong key': (_key, headers) => generate(google('gw_wrong')('gemini-test'), headers),
};

for (const [name, run] of Object.entries(SCENARIOS)) {
  if (!(name in keys)) continue;
  try {
    const result = await run(keys[name], { 'x-scenario': name });
    process.stdout.write(`${JSON.stringify({ name, result })}\n`);
  } catch (err) {
    const error = {
      name: err?.name,
      statusCode: err?.statusCode ?? err?.lastError?.statusCode,
      message: err?.message,
    };
    process.stdout.write(`${JSON.stringify({ name, error })}\n`);
  }
}
