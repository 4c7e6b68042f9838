/**
 * Stream translation, event by event: each target's real event sequence (the mocks', which the vendors' SDKs parse),
 * fed in pieces split anywhere (inside UTF-8 characters too), must give the same caller events whatever the split,
 * in the exact order each caller's SDK expects, without holding what has arrived.
 */
import {
  responseTranslator,
  type AnswerContext,
  type CallFormat,
  type TargetFormat,
} from '../../src/gateway/translate';
import {
  chatStream,
  generateChunks,
  generateSse,
  messagesStream,
  SIGNATURE,
  THINKING,
  THOUGHT_SIGNATURE,
  type Script,
} from '../helpers/format-mocks';

const TEXT = 'Grüße aus 日本 ✓, done.';
const script = (over: Partial<Script> = {}): Script => ({
  text: TEXT,
  thinking: THINKING,
  calls: [
    { name: 'get_weather', args: { city: 'Zürich', days: 2 } },
    { name: 'get_time', args: { zone: 'CET' } },
  ],
  stop: 'tool_use',
  usage: { input: 100, output: 30, cacheRead: 40, cacheWrite: 0, reasoning: 10 },
  ...over,
});

/** A target's stream bytes for a script, as its mock sends them. */
function upstream(format: TargetFormat, s: Script): Buffer {
  const frames =
    format === 'chat'
      ? chatStream(s, 'target-model', true)
      : format === 'messages'
        ? messagesStream(s, 'target-model')
        : generateSse(generateChunks(s, 'target-model'));
  return Buffer.from(frames.join(''));
}

const CTX: AnswerContext = { model: 'route', stream: true, includeUsage: true, geminiSse: true };

/** The caller's bytes for `bytes` fed in pieces of `size` (0: whole). */
function translate(
  from: TargetFormat,
  to: CallFormat,
  bytes: Buffer,
  size: number,
  ctx: AnswerContext = CTX,
): string {
  const s = responseTranslator(from, to, 'create', ctx).stream();
  const out: Buffer[] = [];
  const step = size || bytes.length;
  for (let i = 0; i < bytes.length; i += step) out.push(s.write(bytes.subarray(i, i + step)));
  out.push(s.end());
  return Buffer.concat(out).toString();
}

/** Minted ids and clock readings masked, so runs compare. */
const masked = (text: string) =>
  text
    .replace(/"(created|created_at|completed_at)":\d+/g, '"$1":0')
    .replace(/\b(call|msg|rs|fc|resp)_[A-Za-z0-9]{24,32}/g, '$1_*');

/** SSE text as its events: `[event name, data]`. */
function events(text: string): [string | undefined, unknown][] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim())
    .map((block) => {
      const name = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)![1]!;
      return [name, data === '[DONE]' ? '[DONE]' : JSON.parse(data)];
    });
}

const PAIRS: [TargetFormat, CallFormat][] = [
  ['chat', 'messages'],
  ['chat', 'generate'],
  ['chat', 'responses'],
  ['messages', 'chat'],
  ['messages', 'generate'],
  ['messages', 'responses'],
  ['generate', 'chat'],
  ['generate', 'messages'],
  ['generate', 'responses'],
];

test.each(PAIRS)('%s to %s: the same events whatever the split, even inside a character', (from, to) => {
  const bytes = upstream(from, script());
  const whole = masked(translate(from, to, bytes, 0));
  for (const size of [1, 2, 3, 5, 13, 64]) expect(masked(translate(from, to, bytes, size))).toBe(whole);
  expect(whole).toContain('日本');
});

test.each(PAIRS)('%s to %s: the first text is out as soon as its event is in', (from, to) => {
  const bytes = upstream(from, script({ thinking: undefined, calls: [], stop: 'end' }));
  const s = responseTranslator(from, to, 'create', CTX).stream();
  const first = bytes.indexOf('Gr'); // the first text delta
  const blank = from === 'generate' ? '\r\n\r\n' : '\n\n';
  const end = bytes.indexOf(blank, first) + blank.length;
  expect(s.write(bytes.subarray(0, end)).toString()).toContain('Gr');
});

describe('chat completions upstream, messages caller', () => {
  const out = events(translate('chat', 'messages', upstream('chat', script()), 7));

  test('message_start, then blocks with their indices, then message_delta with the whole usage, then message_stop', () => {
    const shape = out.map(([name, d]) => {
      const data = d as { index?: number; delta?: { type?: string }; content_block?: { type: string } };
      return [name, data.index ?? null, data.delta?.type ?? data.content_block?.type ?? null];
    });
    const reduced = shape.filter((e, i) => !(i > 0 && JSON.stringify(e) === JSON.stringify(shape[i - 1])));
    expect(reduced).toEqual([
      ['message_start', null, null],
      ['content_block_start', 0, 'thinking'],
      ['content_block_delta', 0, 'thinking_delta'],
      ['content_block_stop', 0, null],
      ['content_block_start', 1, 'text'],
      ['content_block_delta', 1, 'text_delta'],
      ['content_block_stop', 1, null],
      ['content_block_start', 2, 'tool_use'],
      ['content_block_delta', 2, 'input_json_delta'],
      ['content_block_stop', 2, null],
      ['content_block_start', 3, 'tool_use'],
      ['content_block_delta', 3, 'input_json_delta'],
      ['content_block_stop', 3, null],
      ['message_delta', null, null],
      ['message_stop', null, null],
    ]);
  });

  test('tool uses carry the target’s ids and names, their arguments as deltas', () => {
    const starts = out.filter(
      ([n, d]) =>
        n === 'content_block_start' &&
        (d as { content_block: { type: string } }).content_block.type === 'tool_use',
    );
    expect(starts.map(([, d]) => (d as { content_block: unknown }).content_block)).toEqual([
      {
        type: 'tool_use',
        id: 'call_mock0Ab3xYz',
        name: 'get_weather',
        input: {},
        caller: { type: 'direct' },
      },
      { type: 'tool_use', id: 'call_mock1Ab3xYz', name: 'get_time', input: {}, caller: { type: 'direct' } },
    ]);
    const args = out
      .filter(([n, d]) => n === 'content_block_delta' && (d as { index: number }).index === 2)
      .map(([, d]) => (d as { delta: { partial_json: string } }).delta.partial_json);
    expect(args.length).toBeGreaterThan(2);
    expect(JSON.parse(args.join(''))).toEqual({ city: 'Zürich', days: 2 });
  });

  test('the stop reason and usage in the caller’s terms (cache reads apart, thinking counted)', () => {
    const [, delta] = out.find(([n]) => n === 'message_delta')!;
    expect(delta).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null, stop_details: null, container: null },
      usage: {
        input_tokens: 60,
        cache_read_input_tokens: 40,
        cache_creation_input_tokens: 0,
        cache_creation: null,
        output_tokens: 30,
        output_tokens_details: { thinking_tokens: 10 },
        server_tool_use: null,
        service_tier: null,
        inference_geo: null,
        speed: null,
      },
    });
    expect((out[0]![1] as { message: { model: string } }).message.model).toBe('route');
  });
});

describe('messages upstream, chat completions caller', () => {
  const chunks = (ctx = CTX) =>
    events(translate('messages', 'chat', upstream('messages', script()), 5, ctx)).map(([, d]) => d);

  test('role first; reasoning, signed thinking, content, tool calls by index; finish; usage chunk; [DONE]', () => {
    const out = chunks() as {
      choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
      usage?: unknown;
    }[];
    const last = out.pop();
    expect(last).toBe('[DONE]');
    const usage = out.pop()!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 30,
      total_tokens: 130,
      prompt_tokens_details: { cached_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 10 },
    });
    expect(out[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(out.every((c) => c.usage === null)).toBe(true);
    const deltas = out.slice(1).map((c) => c.choices[0]!.delta);
    const join = (key: string) => deltas.map((d) => d[key] ?? '').join('');
    expect(join('reasoning_content')).toBe(THINKING);
    expect(join('content')).toBe(TEXT);
    expect(deltas.find((d) => d.thinking_blocks)).toEqual({
      thinking_blocks: [{ type: 'thinking', thinking: THINKING, signature: SIGNATURE }],
    });
    const calls = deltas.flatMap(
      (d) =>
        (d.tool_calls as { index: number; id?: string; function: { name?: string; arguments: string } }[]) ??
        [],
    );
    expect(calls.filter((c) => c.id).map((c) => [c.index, c.id, c.function.name])).toEqual([
      [0, 'toolu_01Mock0Xyz', 'get_weather'],
      [1, 'toolu_01Mock1Xyz', 'get_time'],
    ]);
    expect(
      JSON.parse(
        calls
          .filter((c) => c.index === 1)
          .map((c) => c.function.arguments)
          .join(''),
      ),
    ).toEqual({ zone: 'CET' });
    expect(out[out.length - 1]!.choices[0]).toEqual({
      index: 0,
      delta: {},
      logprobs: null,
      finish_reason: 'tool_calls',
    });
  });

  test('without include_usage: no usage chunk, no usage fields', () => {
    const out = chunks({ ...CTX, includeUsage: false });
    expect(out[out.length - 1]).toBe('[DONE]');
    expect(
      out
        .slice(0, -1)
        .every((c) => (c as { choices: unknown[] }).choices.length === 1 && !('usage' in (c as object))),
    ).toBe(true);
  });
});

describe('messages upstream, Gemini caller', () => {
  test('thoughts, the signature, text in chunks; each call whole once its arguments are; finish and usage last', () => {
    const out = events(translate('messages', 'generate', upstream('messages', script()), 3)).map(
      ([, d]) =>
        (d as { candidates: { content: { parts: Record<string, unknown>[] }; finishReason?: string }[] })
          .candidates[0]!,
    );
    const parts = out.flatMap((c) => c.content.parts);
    expect(
      parts
        .filter((p) => p.thought && p.text)
        .map((p) => p.text)
        .join(''),
    ).toBe(THINKING);
    expect(parts.find((p) => p.thoughtSignature)).toEqual({
      text: '',
      thought: true,
      thoughtSignature: SIGNATURE,
    });
    expect(
      parts
        .filter((p) => !p.thought && typeof p.text === 'string')
        .map((p) => p.text)
        .join(''),
    ).toBe(TEXT);
    expect(parts.filter((p) => p.functionCall)).toEqual([
      { functionCall: { id: 'toolu_01Mock0Xyz', name: 'get_weather', args: { city: 'Zürich', days: 2 } } },
      { functionCall: { id: 'toolu_01Mock1Xyz', name: 'get_time', args: { zone: 'CET' } } },
    ]);
    expect(out.slice(0, -1).every((c) => c.finishReason === undefined)).toBe(true);
    expect(out[out.length - 1]!.finishReason).toBe('STOP');
    const last = events(
      translate('messages', 'generate', upstream('messages', script()), 0),
    ).pop()![1] as Record<string, unknown>;
    expect(last.usageMetadata).toEqual({
      promptTokenCount: 100,
      candidatesTokenCount: 20,
      totalTokenCount: 130,
      cachedContentTokenCount: 40,
      thoughtsTokenCount: 10,
    });
    expect(last.modelVersion).toBe('route');
  });

  test('without alt=sse, one JSON array written element by element', () => {
    const text = translate('messages', 'generate', upstream('messages', script()), 11, {
      ...CTX,
      geminiSse: false,
    });
    const array = JSON.parse(text) as { candidates: unknown[] }[];
    expect(array.length).toBeGreaterThan(5);
    expect(text.startsWith('[{"candidates"')).toBe(true);
  });
});

describe('Gemini upstream, Responses caller', () => {
  test('created, items added, deltas, items done with the whole item, completed with the response and its usage', () => {
    const out = events(
      translate('generate', 'responses', upstream('generate', script({ thinking: undefined })), 9),
    );
    expect(out.every(([name, d]) => name === (d as { type: string }).type)).toBe(true);
    expect(out.map(([, d]) => (d as { sequence_number: number }).sequence_number)).toEqual(
      out.map((_, i) => i),
    );
    const types = out.map(([n]) => n).filter((n, i, all) => n !== all[i - 1]);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const completed = out[out.length - 1]![1] as {
      response: {
        status: string;
        model: string;
        output: { type: string; call_id?: string }[];
        usage: unknown;
      };
    };
    expect(completed.response.status).toBe('completed');
    expect(completed.response.model).toBe('route');
    expect(completed.response.output.map((o) => o.type)).toEqual([
      'message',
      'function_call',
      'function_call',
    ]);
    // The first call's id carries the Gemini signature back.
    expect(completed.response.output[1]!.call_id).toContain(
      `__gs_${Buffer.from(THOUGHT_SIGNATURE).toString('base64url')}`,
    );
    expect(completed.response.usage).toEqual({
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 40, cache_write_tokens: 0 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 10 },
      total_tokens: 130,
    });
  });
});

describe('streams that break', () => {
  test.each(PAIRS)('%s to %s: an upstream stream cut short ends in the caller’s error', (from, to) => {
    const bytes = upstream(from, script({ thinking: undefined, calls: [], stop: 'end' }));
    const cut = bytes.subarray(0, bytes.indexOf('done'));
    const out = translate(from, to, cut, 4);
    expect(out).toContain('the upstream stream ended before the answer was complete');
    if (to === 'messages')
      expect(out).toMatch(/event: error\ndata: {"type":"error","error":{"type":"api_error"/);
    if (to === 'chat') expect(out).toMatch(/data: {"error":{"message":"the upstream stream ended/);
    if (to === 'generate') expect(out).toMatch(/data: {"error":{"code":502,"message":/);
    if (to === 'responses') expect(out).toMatch(/event: response.failed/);
  });

  test.each(PAIRS)('%s to %s: an error event mid-stream becomes the caller’s', (from, to) => {
    const bytes = upstream(from, script({ thinking: undefined, calls: [], stop: 'end', streamFail: true }));
    const out = events(translate(from, to, bytes, 6));
    const last = out[out.length - 1]!;
    const error = to === 'responses' ? out[out.length - 2]! : last;
    if (to === 'messages') expect(error[0]).toBe('error');
    if (to === 'chat' || to === 'generate') expect(error[1]).toHaveProperty('error');
    if (to === 'responses') expect(error[0]).toBe('error');
    expect(JSON.stringify(error[1])).not.toContain('ended before');
  });
});
