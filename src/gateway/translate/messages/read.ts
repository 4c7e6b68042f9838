import {
  EFFORTS,
  type Effort,
  type Message,
  type Part,
  type Request,
  type Source,
  type TextPart,
  type Tool,
} from '../ir';
import { documentOf, imageOf, numberField, stopList, textParts, toolParameters } from '../read-common';
import { isObj, list, mediaTypeOfUrl, obj, str, text, type Obj } from '../shared';
import { at, TranslationError, type Guard } from '../table';
import { SERVER_BLOCKS } from './fields';

/** A messages-format request, read into the intermediate form (the guard refuses what the target cannot carry). */
export function readMessagesRequest(body: Obj, g: Guard, stream: boolean): Request {
  g.top(body);
  const req: Request = {
    system: body.system == null ? [] : systemParts(body.system, g),
    messages: readMessages(list(body.messages, 'messages'), g),
    stream,
  };
  const take = (key: string) => (g.drops(key, key, body[key]) ? undefined : body[key]);
  req.maxTokens = numberField(body, 'max_tokens');
  req.temperature = numberField(body, 'temperature', take);
  req.topP = numberField(body, 'top_p', take);
  req.topK = numberField(body, 'top_k', take);
  req.stop = stopList(body.stop_sequences, 'stop_sequences');
  const metadata = take('metadata');
  if (metadata != null) req.user = str(obj(metadata).user_id);
  if (body.tools != null) req.tools = readTools(list(body.tools, 'tools'), g);
  if (body.tool_choice != null) readToolChoice(obj(body.tool_choice), g, req);
  readThinking(body, g, req);
  return req;
}

function systemParts(system: unknown, g: Guard): TextPart[] {
  if (typeof system === 'string') return system ? [{ type: 'text', text: system }] : [];
  return list(system, 'system').map((b, i) => {
    const path = at('system', i);
    g.check(`system[].type: ${JSON.stringify(b.type)}`, at(path, 'type'), b.type);
    g.members(b, 'system[]', path, ['type', 'text']);
    return { type: 'text', text: text(b.text, at(path, 'text')) };
  });
}

function readMessages(messages: Obj[], g: Guard): Message[] {
  const names = new Map<string, string>();
  return messages.map((m, i) => {
    const path = at('messages', i);
    const role = m.role;
    g.check(`messages[].role: ${JSON.stringify(role)}`, at(path, 'role'), role);
    const contentPath = at(path, 'content');
    if (role === 'system') {
      return { role: 'system', content: textParts(m.content, contentPath, 'messages[].content[]', g) };
    }
    if (typeof m.content === 'string')
      return { role: role as 'user', content: [{ type: 'text', text: m.content }] };
    const content: Part[] = [];
    list(m.content, contentPath).forEach((b, j) => {
      const part = block(b, at(contentPath, j), g, names);
      if (part) content.push(part);
    });
    return { role: role as 'user' | 'assistant', content };
  });
}

/** One content block; undefined when the table drops it on this target. */
function block(b: Obj, path: string, g: Guard, names: Map<string, string>): Part | undefined {
  const type = b.type;
  const rule =
    typeof type === 'string' && SERVER_BLOCKS.has(type)
      ? 'messages[].content[].type (server tool blocks)'
      : `messages[].content[].type: ${JSON.stringify(type)}`;
  if (g.check(rule, at(path, 'type'), type).how === 'dropped') return undefined;
  switch (type) {
    case 'text':
      g.members(b, 'messages[].content[]', path, ['type', 'text']);
      return { type: 'text', text: text(b.text, at(path, 'text')) };
    case 'image':
      g.members(b, 'messages[].content[]', path, ['type', 'source']);
      return imageOf(source(obj(b.source), at(path, 'source'), g, false), at(path, 'source'), g.target);
    case 'document': {
      g.members(b, 'messages[].content[]', path, ['type', 'source', 'citations']);
      const citations = obj(b.citations);
      if (citations.enabled === true) {
        throw new TranslationError(
          at(path, 'citations'),
          `${at(path, 'citations')}: no other format returns citations`,
        );
      }
      const title = g.target === 'chat' ? str(b.title) : undefined;
      return documentOf(
        source(obj(b.source), at(path, 'source'), g, true),
        at(path, 'source'),
        g.target,
        title,
      );
    }
    case 'tool_use': {
      g.members(b, 'messages[].content[]', path, ['type', 'id', 'name', 'input']);
      const id = text(b.id, at(path, 'id'));
      const name = text(b.name, at(path, 'name'));
      names.set(id, name);
      if (!isObj(b.input))
        throw new TranslationError(at(path, 'input'), `${at(path, 'input')} must be an object`);
      return { type: 'tool_call', id, name, args: b.input };
    }
    case 'tool_result':
      return toolResult(b, path, g, names);
    case 'thinking':
      return { type: 'thinking', text: text(b.thinking, at(path, 'thinking')), signature: str(b.signature) };
    default:
      return { type: 'thinking', text: '', redacted: text(b.data, at(path, 'data')) };
  }
}

function toolResult(b: Obj, path: string, g: Guard, names: Map<string, string>): Part {
  g.members(b, 'messages[].content[]', path, ['type', 'tool_use_id', 'content']);
  const id = text(b.tool_use_id, at(path, 'tool_use_id'));
  const name = names.get(id);
  if (!name && g.target === 'generate') {
    throw new TranslationError(
      at(path, 'tool_use_id'),
      `${at(path, 'tool_use_id')}: no tool_use block with this id comes before it, and the generateContent format ` +
        'needs the function’s name',
    );
  }
  const content: (Part & { type: 'text' | 'image' | 'document' })[] = [];
  if (typeof b.content === 'string') content.push({ type: 'text', text: b.content });
  else if (b.content != null) {
    list(b.content, at(path, 'content')).forEach((c, k) => {
      const here = at(at(path, 'content'), k);
      g.check(`messages[].content[].content[].type: ${JSON.stringify(c.type)}`, at(here, 'type'), c.type);
      g.members(c, 'messages[].content[].content[]', here, [
        'type',
        'text',
        'source',
        'title',
        'citations',
        'context',
      ]);
      if (c.type === 'text') content.push({ type: 'text', text: text(c.text, at(here, 'text')) });
      else if (c.type === 'image')
        content.push(
          imageOf(source(obj(c.source), at(here, 'source'), g, false), at(here, 'source'), g.target),
        );
      else
        content.push(
          documentOf(source(obj(c.source), at(here, 'source'), g, true), at(here, 'source'), g.target),
        );
    });
  }
  const isError =
    b.is_error === true && !g.drops('messages[].content[].is_error', at(path, 'is_error'), true);
  return { type: 'tool_result', id, ...(name ? { name } : {}), content, ...(isError ? { isError } : {}) };
}

/** An image's or a document's source. */
function source(s: Obj, path: string, g: Guard, document: boolean): Source {
  const type = s.type;
  if (type === 'base64') {
    return {
      kind: 'base64',
      mediaType: text(s.media_type, at(path, 'media_type')),
      data: text(s.data, at(path, 'data')),
    };
  }
  if (type === 'url') {
    if (document) g.check('messages[].content[].source.type: "url" (document)', at(path, 'type'), type);
    const url = text(s.url, at(path, 'url'));
    const mediaType = document ? 'application/pdf' : mediaTypeOfUrl(url);
    return { kind: 'url', url, ...(mediaType ? { mediaType } : {}) };
  }
  if (type === 'text' && document) return { kind: 'text', text: text(s.data, at(path, 'data')) };
  g.check(`messages[].content[].source.type: ${JSON.stringify(type)}`, at(path, 'type'), type);
  throw new TranslationError(
    at(path, 'type'),
    `${at(path, 'type')}: ${JSON.stringify(type)} is not translated`,
  );
}

function readTools(tools: Obj[], g: Guard): Tool[] {
  return tools.map((t, i) => {
    const path = at('tools', i);
    const custom = t.type === undefined || t.type === null || t.type === 'custom';
    g.check(
      custom ? 'tools[].type: "custom"' : 'tools[].type (server tools)',
      at(path, 'type'),
      t.type ?? 'custom',
    );
    g.members(t, 'tools[]', path, ['type', 'name', 'description', 'input_schema']);
    const tool: Tool = {
      name: text(t.name, at(path, 'name')),
      parameters: toolParameters(t.input_schema, at(path, 'input_schema')),
    };
    if (typeof t.description === 'string') tool.description = t.description;
    if (typeof t.strict === 'boolean' && !g.drops('tools[].strict', at(path, 'strict'), t.strict))
      tool.strict = t.strict;
    return tool;
  });
}

function readToolChoice(choice: Obj, g: Guard, req: Request): void {
  const type = choice.type;
  if (type === 'auto' || type === 'none') req.toolChoice = { mode: type };
  else if (type === 'any') req.toolChoice = { mode: 'required' };
  else if (type === 'tool') req.toolChoice = { mode: 'tool', name: text(choice.name, 'tool_choice.name') };
  else
    throw new TranslationError(
      'tool_choice.type',
      `tool_choice.type: ${JSON.stringify(type)} is not a tool choice`,
    );
  const single = choice.disable_parallel_tool_use;
  if (
    single === true &&
    !g.drops('tool_choice.disable_parallel_tool_use', 'tool_choice.disable_parallel_tool_use', single)
  ) {
    req.parallelToolCalls = false;
  }
}

/** `thinking` and `output_config` (effort and format) together: an effort may shape adaptive thinking. */
function readThinking(body: Obj, g: Guard, req: Request): void {
  const config = obj(body.output_config);
  g.members(config, 'output_config', 'output_config', []);
  const effort = config.effort;
  if (effort != null && !EFFORTS.includes(effort as Effort)) {
    throw new TranslationError(
      'output_config.effort',
      `output_config.effort: ${JSON.stringify(effort)} is not an effort`,
    );
  }
  const format = obj(config.format);
  if (config.format != null) {
    if (format.type !== 'json_schema') {
      throw new TranslationError(
        'output_config.format.type',
        'output_config.format.type: only json_schema is translated',
      );
    }
    req.output = { kind: 'json_schema', schema: obj(format.schema) };
  }
  const thinking = body.thinking == null ? undefined : obj(body.thinking);
  if (!thinking) {
    if (effort != null) req.reasoning = { effort: effort as Effort, show: true };
    return;
  }
  const type = thinking.type;
  if (g.check(`thinking.type: ${JSON.stringify(type)}`, 'thinking.type', type).how === 'dropped') return;
  const show =
    thinking.display === 'omitted' && !g.drops('thinking.display', 'thinking.display', thinking.display)
      ? false
      : true;
  if (type === 'disabled') req.reasoning = { effort: 'none' };
  else if (type === 'enabled') {
    const budget = numberField(thinking, 'budget_tokens');
    req.reasoning = { ...(budget !== undefined ? { budget } : {}), show };
  } else {
    req.reasoning = { adaptive: true, ...(effort != null ? { effort: effort as Effort } : {}), show };
  }
}
