/**
 * Request translation, pair by pair: the exact body each target gets, and refusals that name the field as the caller
 * wrote it.
 */
import {
  responseTranslator,
  translateRequest,
  TranslationError,
  type CallFormat,
  type Op,
  type TargetFormat,
} from '../../src/gateway/translate';
import { idWithSignature } from '../../src/gateway/translate/ids';

const PNG = 'iVBORw0KGgo=';
const PDF = 'JVBERi0xLjQ=';
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

const body = (from: CallFormat, to: TargetFormat, request: Record<string, unknown>, op: Op = 'create') =>
  translateRequest(from, to, op, request, { targetModel: 'target-model', stream: request.stream === true })
    .body;

/** The TranslationError a request gets (or a failure when it translates). */
function refusal(
  from: CallFormat,
  to: TargetFormat,
  request: Record<string, unknown>,
  op: Op = 'create',
): TranslationError {
  try {
    body(from, to, request, op);
  } catch (e) {
    if (e instanceof TranslationError) return e;
    throw e;
  }
  throw new Error('translated, where a refusal was expected');
}

describe('chat completions to messages', () => {
  test('instructions, a tool-using history, media, output format, effort and the rest', () => {
    const out = body('chat', 'messages', {
      model: 'route',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Use tools.' }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/a.jpg' } },
            {
              type: 'file',
              file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'report.pdf' },
            },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"city":"Paris"}' } },
            { id: 'call.2', type: 'function', function: { name: 'get', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call.2', content: [{ type: 'text', text: 'rainy' }] },
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'So?' },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get', description: 'weather', parameters: schema, strict: true },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get' } },
      parallel_tool_calls: false,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema } },
      reasoning_effort: 'minimal',
      stop: 'END',
      user: 'u-1',
      temperature: 1,
      n: 1,
      store: true,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(out).toEqual({
      model: 'target-model',
      max_tokens: 8192,
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Use tools.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.jpg' } },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: PDF },
              title: 'report.pdf',
            },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_1', name: 'get', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'call_2', name: 'get', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'sunny' }] },
            { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: 'rainy' }] },
          ],
        },
        { role: 'system', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: [{ type: 'text', text: 'So?' }] },
      ],
      temperature: 1,
      stop_sequences: ['END'],
      tools: [{ name: 'get', description: 'weather', input_schema: schema, strict: true }],
      tool_choice: { type: 'tool', name: 'get', disable_parallel_tool_use: true },
      output_config: { format: { type: 'json_schema', schema }, effort: 'low' },
      thinking: { type: 'adaptive' },
      metadata: { user_id: 'u-1' },
      stream: true,
    });
  });

  test('a continued tool turn without its thinking blocks runs without thinking; with them, with', () => {
    const history = [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    ];
    expect(
      body('chat', 'messages', { model: 'r', messages: history, reasoning_effort: 'high' }).thinking,
    ).toEqual({ type: 'disabled' });
    const signed = [
      history[0],
      { ...history[1], thinking_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }] },
      history[2],
    ];
    const out = body('chat', 'messages', { model: 'r', messages: signed, reasoning_effort: 'high' });
    expect(out.thinking).toEqual({ type: 'adaptive' });
    expect((out.messages as { content: unknown[] }[])[1]!.content[0]).toEqual({
      type: 'thinking',
      thinking: 'hmm',
      signature: 'sig',
    });
  });

  test('refusals name the field as the caller wrote it', () => {
    const base = { model: 'r', messages: [{ role: 'user', content: 'hi' }] };
    expect(refusal('chat', 'messages', { ...base, seed: 7 })).toMatchObject({
      field: 'seed',
      message: 'seed: 7 has no equivalent in the messages format: no sampling seed',
    });
    expect(
      refusal('chat', 'messages', {
        model: 'r',
        messages: [
          { role: 'user', content: 'a' },
          { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] },
        ],
      }),
    ).toMatchObject({
      field: 'messages[1].content[0].type',
      message:
        'messages[1].content[0].type: "input_audio" has no equivalent in the messages format: audio is not translated',
    });
    expect(refusal('chat', 'messages', { ...base, n: 2 }).field).toBe('n');
    expect(refusal('chat', 'messages', { ...base, response_format: { type: 'json_object' } }).field).toBe(
      'response_format.type',
    );
    expect(
      refusal('chat', 'messages', {
        model: 'r',
        messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }],
      }).field,
    ).toBe('messages[0].content[0].file.file_id');
    expect(
      refusal('chat', 'messages', {
        model: 'r',
        messages: [
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AAAA' } }],
          },
        ],
      }).field,
    ).toBe('messages[0].content[0].image_url.url');
    expect(
      refusal('chat', 'messages', {
        model: 'r',
        messages: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }],
          },
        ],
      }).field,
    ).toBe('messages[0].tool_calls[0].function.arguments');
  });
});

describe('chat completions to generateContent', () => {
  test('contents, function calls with their signatures, results by name, and generationConfig', () => {
    const id = idWithSignature('call_a', 'c2ln+/sig==');
    const out = body('chat', 'generate', {
      model: 'route',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          ],
        },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id, type: 'function', function: { name: 'get', arguments: '{"city":"Oslo"}' } },
            { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: id, content: 'cold' },
        { role: 'tool', tool_call_id: 'call_b', content: 'noon' },
        { role: 'system', content: 'Be kind.' },
      ],
      tools: [
        { type: 'function', function: { name: 'get', parameters: schema, strict: true } },
        { type: 'function', function: { name: 'time' } },
      ],
      tool_choice: 'required',
      temperature: 0.3,
      top_p: 0.9,
      max_completion_tokens: 300,
      stop: ['X', 'Y'],
      seed: 4,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema } },
      reasoning_effort: 'xhigh',
      user: 'dropped',
    });
    expect(out).toEqual({
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Weather?' },
            { fileData: { fileUri: 'https://example.com/a.png', mimeType: 'image/png' } },
          ],
        },
        {
          role: 'model',
          parts: [
            { text: 'Checking.' },
            {
              functionCall: { id: 'call_a', name: 'get', args: { city: 'Oslo' } },
              thoughtSignature: 'c2ln+/sig==',
            },
            { functionCall: { id: 'call_b', name: 'time', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_a', name: 'get', response: { output: 'cold' } } },
            { functionResponse: { id: 'call_b', name: 'time', response: { output: 'noon' } } },
          ],
        },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Be kind.' }] },
      tools: [{ functionDeclarations: [{ name: 'get', parametersJsonSchema: schema }, { name: 'time' }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: {
        temperature: 0.3,
        topP: 0.9,
        maxOutputTokens: 300,
        stopSequences: ['X', 'Y'],
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        seed: 4,
        responseMimeType: 'application/json',
        responseJsonSchema: schema,
        thinkingConfig: { thinkingLevel: 'HIGH', includeThoughts: true },
      },
    });
  });

  test('a tool result whose call is not in the history cannot name its function: refused', () => {
    const e = refusal('chat', 'generate', {
      model: 'r',
      messages: [{ role: 'tool', tool_call_id: 'x', content: 'r' }],
    });
    expect(e.field).toBe('messages[0].tool_call_id');
  });

  test('parallel_tool_calls: false, which Gemini cannot be asked: its answer is held to its first call', () => {
    const request = { model: 'r', messages: [{ role: 'user', content: 'hi' }], parallel_tool_calls: false };
    const t = translateRequest('chat', 'generate', 'create', request, { targetModel: 't', stream: false });
    expect(t.memo).toEqual({ oneToolCall: true });
    const calls = [{ functionCall: { name: 'a', args: {} } }, { functionCall: { name: 'b', args: {} } }];
    const answer = { candidates: [{ content: { role: 'model', parts: calls }, finishReason: 'STOP' }] };
    const json = responseTranslator('generate', 'chat', 'create', {
      model: 'r',
      stream: false,
      memo: t.memo,
    }).json(answer);
    expect(
      (
        json as { choices: { message: { tool_calls: { function: { name: string } }[] } }[] }
      ).choices[0]!.message.tool_calls.map((c) => c.function.name),
    ).toEqual(['a']);
    const stream = responseTranslator('generate', 'chat', 'create', {
      model: 'r',
      stream: true,
      memo: t.memo,
    }).stream();
    const out =
      stream.write(Buffer.from(`data: ${JSON.stringify(answer)}\n\n`)).toString() + stream.end().toString();
    expect(out).toContain('"name":"a"');
    expect(out).not.toContain('"name":"b"');
  });
});

describe('messages to chat completions', () => {
  test('system blocks, tool uses and results, media, thinking and options', () => {
    const out = body('messages', 'chat', {
      model: 'route',
      max_tokens: 500,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      metadata: { user_id: 'u-2' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look', cache_control: { type: 'ephemeral' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            {
              type: 'document',
              source: { type: 'base64', media_type: 'application/pdf', data: PDF },
              title: 'r.pdf',
            },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain doc' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hmm', signature: 'sig' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'get', input: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'warm' }],
              is_error: true,
            },
            { type: 'text', text: 'And now?' },
          ],
        },
      ],
      tools: [{ name: 'get', input_schema: schema, cache_control: { type: 'ephemeral' } }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 8000 },
      stop_sequences: ['STOP'],
      stream: true,
    });
    expect(out).toEqual({
      model: 'target-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'file', file: { filename: 'r.pdf', file_data: `data:application/pdf;base64,${PDF}` } },
            { type: 'text', text: 'plain doc' },
          ],
        },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: 'warm' },
        { role: 'user', content: 'And now?' },
      ],
      max_completion_tokens: 500,
      stop: ['STOP'],
      tools: [{ type: 'function', function: { name: 'get', parameters: schema } }],
      tool_choice: 'required',
      parallel_tool_calls: false,
      reasoning_effort: 'medium',
      user: 'u-2',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  test('refusals: top_k, a document by URL, server tools, an image in a tool result', () => {
    const base = { model: 'r', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
    expect(refusal('messages', 'chat', { ...base, top_k: 5 }).field).toBe('top_k');
    expect(
      refusal('messages', 'chat', {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x/y.pdf' } }] },
        ],
      }),
    ).toMatchObject({
      field: 'messages[0].content[0].source.type',
      message: expect.stringContaining('file_data'),
    });
    expect(
      refusal('messages', 'chat', { ...base, tools: [{ type: 'bash_20250124', name: 'bash' }] }).field,
    ).toBe('tools[0].type');
    expect(
      refusal('messages', 'chat', {
        ...base,
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }],
              },
            ],
          },
        ],
      }).field,
    ).toBe('messages[1].content[0].content[0].type');
    expect(refusal('messages', 'chat', base, 'count').field).toBe('(token count)');
  });
});

describe('messages to generateContent', () => {
  test('thinking budget, sampling, images in tool results, and signed calls', () => {
    const id = idWithSignature(undefined, 'YWJj');
    const out = body('messages', 'generate', {
      model: 'route',
      max_tokens: 100,
      temperature: 0.5,
      top_k: 3,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [
        { role: 'user', content: 'draw' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'x', signature: 's' },
            { type: 'tool_use', id, name: 'shot', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: id,
              content: [
                { type: 'text', text: 'here' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
              ],
            },
          ],
        },
      ],
    });
    const base = id.slice(0, id.indexOf('__gs_'));
    expect(out).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'draw' }] },
        {
          role: 'model',
          parts: [{ functionCall: { id: base, name: 'shot', args: {} }, thoughtSignature: 'YWJj' }],
        },
        {
          role: 'user',
          parts: [
            {
              functionResponse: {
                id: base,
                name: 'shot',
                response: { output: 'here' },
                parts: [{ inlineData: { mimeType: 'image/png', data: PNG } }],
              },
            },
          ],
        },
      ],
      generationConfig: {
        temperature: 0.5,
        topK: 3,
        maxOutputTokens: 100,
        thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      },
    });
  });

  test('token counts: contents alone, or the whole request naming its model', () => {
    expect(
      body('messages', 'generate', { model: 'r', messages: [{ role: 'user', content: 'hi' }] }, 'count'),
    ).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    });
    expect(
      body(
        'messages',
        'generate',
        { model: 'r', system: 'S', messages: [{ role: 'user', content: 'hi' }] },
        'count',
      ),
    ).toEqual({
      generateContentRequest: {
        model: 'models/target-model',
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        systemInstruction: { parts: [{ text: 'S' }] },
      },
    });
  });
});

describe('generateContent to the others', () => {
  test('snake_case keys, Gemini schemas converted, calls without ids matched to responses by name', () => {
    const out = body('generate', 'chat', {
      system_instruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather?' }] },
        {
          role: 'model',
          parts: [
            { function_call: { name: 'get', args: { city: 'Lima' } } },
            { functionCall: { name: 'get', args: { city: 'Quito' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get', response: { output: 'hot' } } },
            { functionResponse: { name: 'get', response: { temp: 20 } } },
          ],
        },
      ],
      tools: [
        {
          function_declarations: [
            {
              name: 'get',
              parameters: {
                type: 'OBJECT',
                properties: { city: { type: 'STRING', nullable: true } },
                property_ordering: ['city'],
              },
            },
          ],
        },
      ],
      tool_config: { function_calling_config: { mode: 'ANY', allowed_function_names: ['get'] } },
      generation_config: {
        max_output_tokens: 50,
        response_mime_type: 'application/json',
        response_schema: { type: 'ARRAY', items: { type: 'INTEGER' }, max_items: '3' },
      },
      safety_settings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    });
    expect(out).toEqual({
      model: 'target-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1_0', type: 'function', function: { name: 'get', arguments: '{"city":"Lima"}' } },
            { id: 'call_1_1', type: 'function', function: { name: 'get', arguments: '{"city":"Quito"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1_0', content: 'hot' },
        { role: 'tool', tool_call_id: 'call_1_1', content: '{"temp":20}' },
      ],
      max_completion_tokens: 50,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get',
            parameters: { type: 'object', properties: { city: { type: ['string', 'null'] } } },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get' } },
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'output', schema: { type: 'array', items: { type: 'integer' }, maxItems: 3 } },
      },
    });
  });

  test('signed thoughts become thinking blocks for a messages target; a redacted one comes back redacted', () => {
    const out = body('generate', 'messages', {
      contents: [
        { role: 'user', parts: [{ text: 'q' }] },
        {
          role: 'model',
          parts: [
            { text: 'part one, ', thought: true },
            { text: 'part two', thought: true, thoughtSignature: 'sig' },
            { text: '', thought: true, thoughtSignature: 'redacted:opaque' },
            { text: 'answer' },
          ],
        },
        { role: 'user', parts: [{ text: 'more' }] },
      ],
      generationConfig: { thinkingConfig: { thinkingBudget: 0 } },
    });
    expect(out.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'q' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'part one, part two', signature: 'sig' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: 'answer' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'more' }] },
    ]);
    expect(out.thinking).toEqual({ type: 'disabled' });
  });

  test('refusals: Files API and gs:// files, audio, grounding, a lone response', () => {
    const one = (parts: unknown[]) => ({ contents: [{ role: 'user', parts }] });
    expect(
      refusal(
        'generate',
        'chat',
        one([{ fileData: { fileUri: 'gs://b/f.pdf', mimeType: 'application/pdf' } }]),
      ).field,
    ).toBe('contents[0].parts[0].fileData.fileUri');
    expect(
      refusal('generate', 'messages', one([{ inlineData: { mimeType: 'audio/wav', data: 'AA' } }])).field,
    ).toBe('contents[0].parts[0].inlineData.mimeType');
    expect(
      refusal('generate', 'chat', { ...one([{ text: 'hi' }]), tools: [{ googleSearch: {} }] }).field,
    ).toBe('tools[0].googleSearch');
    expect(refusal('generate', 'chat', one([{ functionResponse: { name: 'f', response: {} } }])).field).toBe(
      'contents[0].parts[0].functionResponse',
    );
    expect(
      refusal('generate', 'messages', { ...one([{ text: 'hi' }]), generationConfig: { candidateCount: 2 } })
        .field,
    ).toBe('generationConfig.candidateCount');
  });
});

describe('Responses to the others', () => {
  const input = [
    { role: 'developer', content: 'Use tools.' },
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'Weather?' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
      ],
    },
    {
      type: 'reasoning',
      id: 'rs_1',
      summary: [{ type: 'summary_text', text: 'thought' }],
      encrypted_content: 'sig',
    },
    {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_1',
      name: 'get',
      arguments: '{"city":"Bern"}',
      status: 'completed',
    },
    { type: 'function_call_output', call_id: 'call_1', output: 'mild' },
    {
      type: 'message',
      role: 'assistant',
      id: 'msg_1',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Mild.', annotations: [] }],
    },
    { role: 'user', content: 'Thanks' },
  ];
  const request = {
    model: 'route',
    instructions: 'Be brief.',
    input,
    tools: [{ type: 'function', name: 'get', parameters: schema, strict: true }],
    reasoning: { effort: 'medium', summary: 'auto' },
    include: ['reasoning.encrypted_content'],
    text: { format: { type: 'json_schema', name: 'w', schema, strict: true }, verbosity: 'medium' },
    max_output_tokens: 900,
    store: false,
    stream: true,
  };

  test('to messages: items as turns, the reasoning item as a signed thinking block', () => {
    expect(body('responses', 'messages', request)).toEqual({
      model: 'target-model',
      max_tokens: 900,
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Use tools.' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'thought', signature: 'sig' },
            { type: 'tool_use', id: 'call_1', name: 'get', input: { city: 'Bern' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'mild' }] },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'Mild.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ],
      tools: [{ name: 'get', input_schema: schema, strict: true }],
      output_config: { format: { type: 'json_schema', schema }, effort: 'medium' },
      thinking: { type: 'adaptive' },
      stream: true,
    });
  });

  test('to chat and generateContent: reasoning items left out, the call’s name found for its output', () => {
    const chat = body('responses', 'chat', request);
    expect(chat.messages).toEqual([
      { role: 'system', content: 'Be brief.\n\nUse tools.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get', arguments: '{"city":"Bern"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'mild' },
      { role: 'assistant', content: 'Mild.' },
      { role: 'user', content: 'Thanks' },
    ]);
    expect(chat).toMatchObject({
      reasoning_effort: 'medium',
      max_completion_tokens: 900,
      response_format: { type: 'json_schema', json_schema: { name: 'w', strict: true } },
    });
    const generate = body('responses', 'generate', request);
    expect((generate.contents as unknown[])[2]).toEqual({
      role: 'user',
      parts: [{ functionResponse: { id: 'call_1', name: 'get', response: { output: 'mild' } } }],
    });
  });

  test('the answer’s echo of the request is kept', () => {
    const t = translateRequest('responses', 'chat', 'create', request, { targetModel: 't', stream: true });
    expect(t.memo).toMatchObject({
      instructions: 'Be brief.',
      max_output_tokens: 900,
      reasoning: request.reasoning,
      tools: request.tools,
    });
  });

  test('refusals: state kept at OpenAI, built-in tools, other includes', () => {
    const base = { model: 'r', input: 'hi' };
    expect(refusal('responses', 'messages', { ...base, previous_response_id: 'resp_1' }).field).toBe(
      'previous_response_id',
    );
    expect(refusal('responses', 'generate', { ...base, tools: [{ type: 'web_search' }] }).field).toBe(
      'tools[0].type',
    );
    expect(refusal('responses', 'chat', { ...base, include: ['message.output_text.logprobs'] }).field).toBe(
      'include[0]',
    );
    expect(
      refusal('responses', 'chat', { ...base, input: [{ type: 'item_reference', id: 'msg_1' }] }).field,
    ).toBe('input[0].type');
    expect(() =>
      body('responses', 'chat', { ...base, store: true, previous_response_id: null }),
    ).not.toThrow();
  });
});
