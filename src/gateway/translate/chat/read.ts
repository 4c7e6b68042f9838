import { EFFORTS, type Effort, type Message, type Part, type Request, type TextPart, type Tool } from '../ir';
import { isObj, list, obj, parseArgs, sourceOfUrl, str, text, type Obj } from '../shared';
import { at, TranslationError, type Guard } from '../table';
import { documentOf, imageOf, numberField, stopList, textParts, toolParameters } from '../read-common';

/** A chat completions request, read into the intermediate form (the guard refuses what the target cannot carry). */
export function readChatRequest(body: Obj, g: Guard, stream: boolean): Request {
  g.top(body);
  const req: Request = { ...readMessages(list(body.messages, 'messages'), g), stream };
  const take = (key: string) => (g.drops(key, key, body[key]) ? undefined : body[key]);

  req.maxTokens = numberField(body, 'max_completion_tokens') ?? numberField(body, 'max_tokens');
  req.temperature = numberField(body, 'temperature', take);
  req.topP = numberField(body, 'top_p', take);
  req.frequencyPenalty = numberField(body, 'frequency_penalty', take);
  req.presencePenalty = numberField(body, 'presence_penalty', take);
  req.seed = numberField(body, 'seed', take);
  req.stop = stopList(body.stop, 'stop');
  req.user = str(take('user')) ?? str(take('safety_identifier'));
  if (take('parallel_tool_calls') === false) req.parallelToolCalls = false;

  if (body.tools != null) req.tools = list(body.tools, 'tools').map((t, i) => readTool(t, at('tools', i), g));
  if (body.tool_choice != null) req.toolChoice = readToolChoice(body.tool_choice, g);
  if (body.response_format != null) req.output = readResponseFormat(obj(body.response_format), g);
  const effort = take('reasoning_effort');
  if (effort != null) {
    if (!EFFORTS.includes(effort as Effort)) {
      throw new TranslationError(
        'reasoning_effort',
        `reasoning_effort: ${JSON.stringify(effort)} is not an effort`,
      );
    }
    req.reasoning = { effort: effort as Effort, show: true };
  }
  return req;
}

function readMessages(messages: Obj[], g: Guard): { system: TextPart[]; messages: Message[] } {
  const out: Message[] = [];
  const names = new Map<string, string>();
  const system: TextPart[] = [];
  let started = false;
  messages.forEach((m, i) => {
    const path = at('messages', i);
    const role = m.role;
    g.check(`messages[].role: ${JSON.stringify(role)}`, at(path, 'role'), role);
    g.members(m, 'messages[]', path, ['role', 'content', 'tool_calls']);
    if (role === 'system' || role === 'developer') {
      const parts = textParts(m.content, at(path, 'content'), 'messages[].content[]', g);
      if (started) out.push({ role: 'system', content: parts });
      else system.push(...parts);
    } else if (role === 'user') {
      started = true;
      out.push({ role: 'user', content: userContent(m.content, at(path, 'content'), g) });
    } else if (role === 'assistant') {
      started = true;
      out.push({ role: 'assistant', content: assistantContent(m, path, g, names) });
    } else {
      started = true;
      const id = text(m.tool_call_id, at(path, 'tool_call_id'));
      const name = names.get(id);
      if (!name && g.target === 'generate') {
        throw new TranslationError(
          at(path, 'tool_call_id'),
          `${at(path, 'tool_call_id')}: no assistant tool call with this id comes before it, and the generateContent ` +
            'format needs the function’s name',
        );
      }
      const content = textParts(m.content, at(path, 'content'), 'messages[].content[]', g);
      out.push({ role: 'user', content: [{ type: 'tool_result', id, ...(name ? { name } : {}), content }] });
    }
  });
  return { system, messages: out };
}

function userContent(content: unknown, path: string, g: Guard): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return list(content, path).map((p, j) => {
    const here = at(path, j);
    g.check(`messages[].content[].type: ${JSON.stringify(p.type)}`, at(here, 'type'), p.type);
    g.members(p, 'messages[].content[]', here, ['type', 'text', 'image_url', 'file']);
    if (p.type === 'text') return { type: 'text', text: text(p.text, at(here, 'text')) };
    if (p.type === 'image_url') {
      const image = obj(p.image_url);
      g.members(image, 'messages[].content[].image_url', at(here, 'image_url'), ['url']);
      const url = at(at(here, 'image_url'), 'url');
      return imageOf(sourceOfUrl(text(image.url, url), url), url, g.target);
    }
    const file = obj(p.file);
    g.members(file, 'messages[].content[].file', at(here, 'file'), ['file_data']);
    const dataPath = at(at(here, 'file'), 'file_data');
    const data = text(file.file_data, dataPath);
    const filename = g.drops(
      'messages[].content[].file.filename',
      at(at(here, 'file'), 'filename'),
      file.filename,
    )
      ? undefined
      : str(file.filename);
    // A data: URL, as OpenAI documents it; some clients send the bare base64 of a PDF.
    const source = data.startsWith('data:')
      ? sourceOfUrl(data, dataPath)
      : { kind: 'base64' as const, mediaType: 'application/pdf', data };
    return documentOf(source, dataPath, g.target, filename);
  });
}

function assistantContent(m: Obj, path: string, g: Guard, names: Map<string, string>): Part[] {
  const parts: Part[] = [];
  if (m.thinking_blocks != null && !g.drops('messages[].thinking_blocks', at(path, 'thinking_blocks'), 1)) {
    list(m.thinking_blocks, at(path, 'thinking_blocks')).forEach((b, k) => {
      const here = at(at(path, 'thinking_blocks'), k);
      if (b.type === 'redacted_thinking')
        parts.push({ type: 'thinking', text: '', redacted: text(b.data, at(here, 'data')) });
      else
        parts.push({
          type: 'thinking',
          text: text(b.thinking, at(here, 'thinking')),
          signature: str(b.signature),
        });
    });
  }
  const content = m.content;
  if (typeof content === 'string') {
    if (content) parts.push({ type: 'text', text: content });
  } else if (content != null) {
    list(content, at(path, 'content')).forEach((p, j) => {
      const here = at(at(path, 'content'), j);
      g.check(`messages[].content[].type: ${JSON.stringify(p.type)}`, at(here, 'type'), p.type);
      const value = p.type === 'refusal' ? p.refusal : p.text;
      parts.push({ type: 'text', text: text(value, at(here, String(p.type))) });
    });
  }
  if (typeof m.refusal === 'string' && m.refusal) parts.push({ type: 'text', text: m.refusal });
  if (m.tool_calls != null) {
    list(m.tool_calls, at(path, 'tool_calls')).forEach((call, k) => {
      const here = at(at(path, 'tool_calls'), k);
      if (call.type !== undefined && call.type !== 'function') {
        g.check(`messages[].tool_calls[].type: ${JSON.stringify(call.type)}`, at(here, 'type'), call.type);
      }
      g.check('messages[].tool_calls[]', here, call);
      const fn = obj(call.function);
      const id = text(call.id, at(here, 'id'));
      const name = text(fn.name, at(at(here, 'function'), 'name'));
      names.set(id, name);
      const args = parseArgs(str(fn.arguments) ?? '', at(at(here, 'function'), 'arguments'));
      parts.push({ type: 'tool_call', id, name, args });
    });
  }
  return parts;
}

function readTool(t: Obj, path: string, g: Guard): Tool {
  g.check(`tools[].type: ${JSON.stringify(t.type)}`, at(path, 'type'), t.type);
  const fn = obj(t.function);
  const tool: Tool = {
    name: text(fn.name, at(at(path, 'function'), 'name')),
    parameters: toolParameters(fn.parameters, at(at(path, 'function'), 'parameters')),
  };
  if (typeof fn.description === 'string') tool.description = fn.description;
  const strictPath = at(at(path, 'function'), 'strict');
  if (fn.strict != null && !g.drops('tools[].function.strict', strictPath, fn.strict))
    tool.strict = fn.strict === true;
  return tool;
}

function readToolChoice(choice: unknown, g: Guard): Request['toolChoice'] {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { mode: choice };
  if (!isObj(choice))
    throw new TranslationError('tool_choice', `tool_choice: ${JSON.stringify(choice)} is not a tool choice`);
  if (choice.type !== 'function')
    g.check(`tool_choice.type: ${JSON.stringify(choice.type)}`, 'tool_choice.type', choice.type);
  return { mode: 'tool', name: text(obj(choice.function).name, 'tool_choice.function.name') };
}

function readResponseFormat(format: Obj, g: Guard): Request['output'] {
  const handling = g.check(
    `response_format.type: ${JSON.stringify(format.type)}`,
    'response_format.type',
    format.type,
  );
  if (handling.how === 'dropped') return undefined;
  if (format.type === 'json_object') return { kind: 'json_object' };
  const schema = obj(format.json_schema);
  return {
    kind: 'json_schema',
    schema: obj(schema.schema),
    ...(typeof schema.name === 'string' ? { name: schema.name } : {}),
    ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
    ...(typeof schema.strict === 'boolean' ? { strict: schema.strict } : {}),
  };
}
