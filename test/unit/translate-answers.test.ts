/** Whole answers, token counts and errors, from each target format into each caller's. */
import {
  responseTranslator,
  UnreadableAnswer,
  type CallFormat,
  type Op,
  type TargetFormat,
} from '../../src/gateway/translate';

const translator = (from: TargetFormat, to: CallFormat, op: Op = 'create') =>
  responseTranslator(from, to, op, { model: 'route', stream: false, memo: {} });

const messagesAnswer = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-x',
  content: [
    { type: 'thinking', thinking: 'hm', signature: 'sig' },
    { type: 'text', text: 'Hi', citations: null },
    { type: 'tool_use', id: 'toolu_1', name: 'f', input: { a: 1 } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: {
    input_tokens: 10,
    cache_read_input_tokens: 20,
    cache_creation_input_tokens: 5,
    output_tokens: 7,
    output_tokens_details: { thinking_tokens: 3 },
  },
};

describe('a messages answer', () => {
  test('for a chat caller: content, reasoning, signed blocks, tool calls, usage with cache reads and writes', () => {
    expect(translator('messages', 'chat').json(messagesAnswer)).toEqual({
      id: 'chatcmpl-msg_1',
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'route',
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'Hi',
            refusal: null,
            reasoning_content: 'hm',
            thinking_blocks: [{ type: 'thinking', thinking: 'hm', signature: 'sig' }],
            tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
        },
      ],
      usage: {
        prompt_tokens: 35,
        completion_tokens: 7,
        total_tokens: 42,
        prompt_tokens_details: { cached_tokens: 20, cache_write_tokens: 5 },
        completion_tokens_details: { reasoning_tokens: 3 },
      },
    });
  });

  test('for a Gemini caller: thought, text and call parts; STOP; usage with thoughts apart', () => {
    expect(translator('messages', 'generate').json(messagesAnswer)).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'hm', thought: true, thoughtSignature: 'sig' },
              { text: 'Hi' },
              { functionCall: { id: 'toolu_1', name: 'f', args: { a: 1 } } },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 35,
        candidatesTokenCount: 4,
        totalTokenCount: 42,
        cachedContentTokenCount: 20,
        thoughtsTokenCount: 3,
      },
      modelVersion: 'route',
      responseId: 'msg_1',
    });
  });

  test('for a Responses caller: a reasoning item signed in encrypted_content, a message, a call', () => {
    const answer = translator('messages', 'responses').json(messagesAnswer) as Record<string, unknown>;
    expect(answer).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'route',
      store: false,
      output: [
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'hm' }], encrypted_content: 'sig' },
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hi', annotations: [] }],
        },
        { type: 'function_call', call_id: 'toolu_1', name: 'f', arguments: '{"a":1}', status: 'completed' },
      ],
      usage: {
        input_tokens: 35,
        input_tokens_details: { cached_tokens: 20, cache_write_tokens: 5 },
        output_tokens: 7,
        output_tokens_details: { reasoning_tokens: 3 },
        total_tokens: 42,
      },
    });
    expect(answer.id).toMatch(/^resp_/);
  });
});

describe('stop reasons', () => {
  const gemini = (finishReason: string, extra: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: 'model', parts: [{ text: 'x' }] }, finishReason }],
    usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
    ...extra,
  });

  test('MAX_TOKENS everywhere', () => {
    expect(
      (translator('generate', 'chat').json(gemini('MAX_TOKENS')) as { choices: { finish_reason: string }[] })
        .choices[0]!.finish_reason,
    ).toBe('length');
    expect(translator('generate', 'messages').json(gemini('MAX_TOKENS'))).toMatchObject({
      stop_reason: 'max_tokens',
    });
    expect(translator('generate', 'responses').json(gemini('MAX_TOKENS'))).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
  });

  test('safety and a blocked prompt as content filters; a refusal as one', () => {
    expect(
      (translator('generate', 'chat').json(gemini('SAFETY')) as { choices: { finish_reason: string }[] })
        .choices[0]!.finish_reason,
    ).toBe('content_filter');
    expect(
      translator('generate', 'messages').json({ promptFeedback: { blockReason: 'SAFETY' } }),
    ).toMatchObject({ stop_reason: 'refusal', content: [] });
    expect(
      translator('messages', 'generate').json({ ...messagesAnswer, stop_reason: 'refusal' }),
    ).toMatchObject({
      candidates: [{ finishReason: 'SAFETY' }],
    });
    const chat = {
      choices: [
        { index: 0, message: { role: 'assistant', content: null, refusal: 'No.' }, finish_reason: 'stop' },
      ],
    };
    expect(translator('chat', 'responses').json(chat)).toMatchObject({
      output: [{ type: 'message', content: [{ type: 'refusal', refusal: 'No.' }] }],
    });
  });

  test('a stop sequence: the end of the turn where the caller’s format has no such reason', () => {
    const stopped = {
      ...messagesAnswer,
      content: [{ type: 'text', text: 'a' }],
      stop_reason: 'stop_sequence',
      stop_sequence: '##',
    };
    expect(
      (translator('messages', 'chat').json(stopped) as { choices: { finish_reason: string }[] }).choices[0]!
        .finish_reason,
    ).toBe('stop');
    expect(translator('messages', 'generate').json(stopped)).toMatchObject({
      candidates: [{ finishReason: 'STOP' }],
    });
    expect(translator('messages', 'responses').json(stopped)).toMatchObject({ status: 'completed' });
  });
});

describe('token counts', () => {
  test('messages ↔ Gemini, and Responses', () => {
    expect(translator('messages', 'generate', 'count').json({ input_tokens: 12 })).toEqual({
      totalTokens: 12,
    });
    expect(
      translator('generate', 'messages', 'count').json({ totalTokens: 9, promptTokensDetails: [] }),
    ).toEqual({ input_tokens: 9 });
    expect(translator('generate', 'responses', 'count').json({ totalTokens: 9 })).toEqual({
      object: 'response.input_tokens',
      input_tokens: 9,
    });
  });
});

describe('answers that cannot be read', () => {
  test('a 2xx body in no known shape is an UnreadableAnswer (the gateway answers 502)', () => {
    expect(() => translator('chat', 'messages').json({ object: 'list' })).toThrow(UnreadableAnswer);
    expect(() => translator('messages', 'chat').json(Buffer.from('<html>'))).toThrow(UnreadableAnswer);
    expect(() => translator('generate', 'chat').json({})).toThrow(UnreadableAnswer);
    const badArgs = {
      choices: [
        {
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{x' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    expect(() => translator('chat', 'messages').json(badArgs)).toThrow(/not a JSON object/);
  });
});

describe('errors', () => {
  const openaiError = Buffer.from(
    JSON.stringify({
      error: { message: 'Rate limit reached', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    }),
  );
  const anthropicError = Buffer.from(
    JSON.stringify({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      request_id: 'req_1',
    }),
  );
  const googleError = Buffer.from(
    JSON.stringify([{ error: { code: 400, message: 'Bad schema', status: 'INVALID_ARGUMENT' } }]),
  );

  test('in the caller’s shape, saying where they came from', () => {
    expect(JSON.parse(translator('chat', 'messages').error(429, openaiError).toString())).toEqual({
      type: 'error',
      error: {
        type: 'rate_limit_error',
        message: 'the upstream (chat completions format) answered 429 requests: Rate limit reached',
      },
    });
    expect(JSON.parse(translator('messages', 'chat').error(529, anthropicError).toString())).toEqual({
      error: {
        message: 'the upstream (messages format) answered 529 overloaded_error: Overloaded',
        type: 'server_error',
        param: null,
        code: null,
      },
    });
    expect(JSON.parse(translator('generate', 'responses').error(400, googleError).toString())).toEqual({
      error: {
        message: 'the upstream (generateContent format) answered 400 INVALID_ARGUMENT: Bad schema',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    expect(JSON.parse(translator('messages', 'generate').error(404, anthropicError).toString())).toEqual({
      error: {
        code: 404,
        message: 'the upstream (messages format) answered 404 overloaded_error: Overloaded',
        status: 'NOT_FOUND',
      },
    });
  });

  test('a body that is not the format’s error says so, with its start', () => {
    const out = JSON.parse(
      translator('chat', 'messages').error(502, Buffer.from('<html>Bad Gateway</html>')).toString(),
    );
    expect(out.error.message).toBe(
      'the upstream (chat completions format) answered 502 with a body that is not a chat completions error: <html>Bad Gateway</html>',
    );
    expect(
      JSON.parse(translator('generate', 'chat').error(503, Buffer.alloc(0)).toString()).error.message,
    ).toBe(
      'the upstream (generateContent format) answered 503 with a body that is not a generateContent error',
    );
  });
});
