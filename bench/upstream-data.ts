/** What the bench vendor answers, shared with the bench so it can check that no byte changed on the way. */
export const JSON_ANSWER = Buffer.from(
  JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model: 'claude-bench',
    content: [{ type: 'text', text: 'The quick brown fox jumps over the lazy dog. '.repeat(8) }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 25, output_tokens: 97 },
  }),
);

/** The chat-completions answer (OpenAI format), about the same size. */
export const CHAT_ANSWER = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1700000000,
    model: 'gpt-bench',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'The quick brown fox jumps over the lazy dog. '.repeat(8) },
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 25, completion_tokens: 97, total_tokens: 122 },
  }),
);

export const SSE_EVENT_GAP_MS = 50;

export const sseEvent = (i: number): string =>
  `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"event ${i}"}}\n\n`;

/** 100 MiB, in 64 KiB chunks of complete text-delta events padded to size. */
export const BIG_BYTES = 100 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

export function bigChunk(): Buffer {
  const event = sseEvent(7);
  const whole = event.repeat(Math.floor(CHUNK_BYTES / event.length));
  return Buffer.from(whole + ':'.padEnd(CHUNK_BYTES - whole.length - 1, ' ') + '\n');
}

/** The two hot routes both gateway benches drive, each with a typical small request and the stand-in's answer. */
export const HOT_ROUTES = [
  {
    name: 'messages',
    path: '/v1/messages',
    body: JSON.stringify({
      model: 'claude-bench',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Say something about foxes.' }],
    }),
    answer: JSON_ANSWER,
  },
  {
    name: 'chat',
    path: '/v1/chat/completions',
    body: JSON.stringify({
      model: 'gpt-bench',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Say something about foxes.' }],
    }),
    answer: CHAT_ANSWER,
  },
] as const;

/**
 * A whole stream in a format, for translated calls: its head (before the first text), `n` text deltas (`tok0 `,
 * `tok1 ` ...), and its tail (the stop, and the usage: a chat stream's usage chunk only when asked).
 */
export function formatStream(
  format: 'messages' | 'chat',
  n: number,
  usage: boolean,
): { head: string[]; deltas: string[]; tail: string[] } {
  const deltas = Array.from({ length: n }, (_, i) => `tok${i} `);
  if (format === 'messages') {
    const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    return {
      head: [
        event('message_start', {
          type: 'message_start',
          message: {
            id: 'msg_bench',
            type: 'message',
            role: 'assistant',
            model: 'claude-bench',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: 25, output_tokens: 1 },
          },
        }),
        event('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        }),
      ],
      deltas: deltas.map((text) =>
        event('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text },
        }),
      ),
      tail: [
        event('content_block_stop', { type: 'content_block_stop', index: 0 }),
        event('message_delta', {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: n },
        }),
        event('message_stop', { type: 'message_stop' }),
      ],
    };
  }
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'gpt-bench',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  return {
    head: [chunk({ role: 'assistant', content: '' })],
    deltas: deltas.map((content) => chunk({ content })),
    tail: [
      chunk({}, 'stop'),
      ...(usage
        ? [
            `data: ${JSON.stringify({
              id: 'chatcmpl-bench',
              object: 'chat.completion.chunk',
              created: 1700000000,
              model: 'gpt-bench',
              choices: [],
              usage: { prompt_tokens: 25, completion_tokens: n, total_tokens: 25 + n },
            })}\n\n`,
          ]
        : []),
      'data: [DONE]\n\n',
    ],
  };
}
