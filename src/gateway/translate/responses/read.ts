import { EFFORTS, type Effort, type Message, type Part, type Request, type TextPart, type Tool } from '../ir';
import { REDACTED } from '../ids';
import { documentOf, imageOf, numberField, toolParameters } from '../read-common';
import { isObj, list, obj, parseArgs, sourceOfUrl, str, text, type Obj } from '../shared';
import { at, TranslationError, type Guard } from '../table';

const ITEM_TYPES = new Set([
  'message',
  'function_call',
  'function_call_output',
  'reasoning',
  'item_reference',
  'custom_tool_call',
  'custom_tool_call_output',
]);

/** A Responses request, read into the intermediate form (the guard refuses what the target cannot carry). */
export function readResponsesRequest(body: Obj, g: Guard, stream: boolean): Request {
  g.top(body);
  const system: TextPart[] = [];
  if (typeof body.instructions === 'string' && body.instructions)
    system.push({ type: 'text', text: body.instructions });
  const req: Request = { system, messages: [], stream };
  if (typeof body.input === 'string')
    req.messages.push({ role: 'user', content: [{ type: 'text', text: body.input }] });
  else if (body.input != null) readItems(list(body.input, 'input'), g, req);

  const take = (key: string) => (g.drops(key, key, body[key]) ? undefined : body[key]);
  req.maxTokens = numberField(body, 'max_output_tokens');
  req.temperature = numberField(body, 'temperature', take);
  req.topP = numberField(body, 'top_p', take);
  req.user = str(take('user')) ?? str(take('safety_identifier'));
  if (take('parallel_tool_calls') === false) req.parallelToolCalls = false;
  if (body.include != null) {
    if (!Array.isArray(body.include)) throw new TranslationError('include', 'include must be an array');
    body.include.forEach((value: unknown, i) => {
      const ruleName =
        value === 'reasoning.encrypted_content' ? `include[]: "${value}"` : 'include[] (other)';
      g.check(ruleName, at('include', i), value);
    });
  }
  if (body.tools != null) req.tools = readTools(list(body.tools, 'tools'), g);
  if (body.tool_choice != null) req.toolChoice = readToolChoice(body.tool_choice, g);
  if (body.text != null) readText(obj(body.text), g, req);
  if (body.reasoning != null) readReasoning(obj(body.reasoning), g, req);
  return req;
}

function readItems(items: Obj[], g: Guard, req: Request): void {
  const names = new Map<string, string>();
  let started = false;
  const push = (role: Message['role'], content: Part[]) => {
    const last = req.messages[req.messages.length - 1];
    // Calls and outputs come one item each: consecutive ones make one turn.
    if (last && last.role === role && role !== 'system') last.content.push(...content);
    else req.messages.push({ role, content });
  };
  items.forEach((item, i) => {
    const path = at('input', i);
    const type = item.type ?? 'message';
    g.check(
      typeof type === 'string' && ITEM_TYPES.has(type)
        ? `input[].type: ${JSON.stringify(type)}`
        : 'input[].type (built-in tool items)',
      at(path, 'type'),
      type,
    );
    if (type === 'message') {
      const role = item.role;
      g.check(`input[].role: ${JSON.stringify(role)}`, at(path, 'role'), role);
      g.members(item, 'input[]', path, ['type', 'role', 'content']);
      const content = messageContent(item.content, at(path, 'content'), g);
      if (role === 'system' || role === 'developer') {
        if (started) push('system', content);
        else req.system.push(...(content as TextPart[]));
      } else {
        started = true;
        push(role === 'assistant' ? 'assistant' : 'user', content);
      }
      return;
    }
    started = true;
    if (type === 'function_call') {
      const id = text(item.call_id, at(path, 'call_id'));
      const name = namespacedName(str(item.namespace), text(item.name, at(path, 'name')));
      names.set(id, name);
      push('assistant', [
        { type: 'tool_call', id, name, args: parseArgs(str(item.arguments) ?? '', at(path, 'arguments')) },
      ]);
    } else if (type === 'function_call_output') {
      const id = text(item.call_id, at(path, 'call_id'));
      const name = names.get(id);
      if (!name && g.target === 'generate') {
        throw new TranslationError(
          at(path, 'call_id'),
          `${at(path, 'call_id')}: no function_call with this call_id comes before it, and the generateContent format ` +
            'needs the function’s name',
        );
      }
      push('user', [
        {
          type: 'tool_result',
          id,
          ...(name ? { name } : {}),
          content: outputContent(item.output, at(path, 'output'), g),
        },
      ]);
    } else if (type === 'custom_tool_call') {
      const id = text(item.call_id, at(path, 'call_id'));
      const name = namespacedName(str(item.namespace), text(item.name, at(path, 'name')));
      names.set(id, name);
      push('assistant', [
        { type: 'tool_call', id, name, args: { input: text(item.input, at(path, 'input')) } },
      ]);
    } else if (type === 'custom_tool_call_output') {
      const id = text(item.call_id, at(path, 'call_id'));
      const name = names.get(id);
      push('user', [
        {
          type: 'tool_result',
          id,
          ...(name ? { name } : {}),
          content: outputContent(item.output, at(path, 'output'), g),
        },
      ]);
    } else if (type === 'reasoning') {
      const thinking = g.drops('input[].type: "reasoning"', at(path, 'type'), type)
        ? undefined
        : reasoningItem(item, path);
      if (thinking) push('assistant', [thinking]);
    }
  });
}

function messageContent(content: unknown, path: string, g: Guard): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return list(content, path).map((p, j) => {
    const here = at(path, j);
    g.check(`input[].content[].type: ${JSON.stringify(p.type)}`, at(here, 'type'), p.type);
    g.members(p, 'input[].content[]', here, ['type', 'text', 'refusal', 'image_url', 'file_data']);
    if (p.type === 'input_text' || p.type === 'output_text')
      return { type: 'text', text: text(p.text, at(here, 'text')) };
    if (p.type === 'refusal') return { type: 'text', text: text(p.refusal, at(here, 'refusal')) };
    return media(p, here, g);
  });
}

function media(p: Obj, path: string, g: Guard): Part {
  if (p.type === 'input_image') {
    const url = at(path, 'image_url');
    return imageOf(sourceOfUrl(text(p.image_url, url), url), url, g.target);
  }
  const title = str(p.filename);
  if (typeof p.file_data === 'string') {
    const data = p.file_data;
    const source = data.startsWith('data:')
      ? sourceOfUrl(data, at(path, 'file_data'))
      : { kind: 'base64' as const, mediaType: 'application/pdf', data };
    return documentOf(source, at(path, 'file_data'), g.target, title);
  }
  const url = text(p.file_url, at(path, 'file_url'));
  return documentOf(sourceOfUrl(url, at(path, 'file_url')), at(path, 'file_url'), g.target, title);
}

function outputContent(
  output: unknown,
  path: string,
  g: Guard,
): (Part & { type: 'text' | 'image' | 'document' })[] {
  if (typeof output === 'string') return [{ type: 'text', text: output }];
  return list(output, path).map((p, k) => {
    const here = at(path, k);
    g.check(`input[].output[].type: ${JSON.stringify(p.type)}`, at(here, 'type'), p.type);
    g.members(p, 'input[].content[]', here, ['type', 'text', 'image_url', 'file_data']);
    if (p.type === 'input_text') return { type: 'text', text: text(p.text, at(here, 'text')) };
    return media(p, here, g) as Part & { type: 'image' | 'document' };
  });
}

/** A reasoning item back as thinking: its summary (or reasoning) text, signed by its `encrypted_content`. */
function reasoningItem(item: Obj, path: string): Part | undefined {
  const encrypted = str(item.encrypted_content);
  if (!encrypted) return undefined;
  if (encrypted.startsWith(REDACTED))
    return { type: 'thinking', text: '', redacted: encrypted.slice(REDACTED.length) };
  const pieces = Array.isArray(item.content) && item.content.length ? item.content : item.summary;
  const thought = (Array.isArray(pieces) ? pieces : [])
    .map((s, k) =>
      text(
        obj(s).text,
        at(at(path, Array.isArray(item.content) && item.content.length ? 'content' : 'summary'), k),
      ),
    )
    .join('');
  return { type: 'thinking', text: thought, signature: encrypted };
}

function readTools(tools: Obj[], g: Guard): Tool[] {
  return tools.flatMap((t, i) => {
    const path = at('tools', i);
    const type = t.type;
    g.check(
      type === 'function' || type === 'custom' || type === 'namespace'
        ? `tools[].type: ${JSON.stringify(type)}`
        : 'tools[].type (built-in tools)',
      at(path, 'type'),
      type,
    );
    if (type === 'namespace') return namespaceTools(t, path, g);
    return [oneTool(t, path, g)];
  });
}

function oneTool(t: Obj, path: string, g: Guard): Tool {
  if (t.type === 'custom') return customTool(t, path, g);
  g.members(t, 'tools[]', path, ['type', 'name', 'description', 'parameters']);
  const tool: Tool = {
    name: text(t.name, at(path, 'name')),
    parameters: toolParameters(t.parameters, at(path, 'parameters')),
  };
  if (typeof t.description === 'string') tool.description = t.description;
  if (typeof t.strict === 'boolean' && !g.drops('tools[].strict', at(path, 'strict'), t.strict))
    tool.strict = t.strict;
  return tool;
}

/** The separator of a namespace and a function's name in the name the target sees. */
export const NAMESPACE_JOIN = '__';

/** A call's name as the target knows it: `<namespace>__<name>` for a function of a namespace. */
export const namespacedName = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}${NAMESPACE_JOIN}${name}` : name;

/**
 * A namespace of tools (Codex's sub-agent tools): each of its functions as a function of its own named
 * `<namespace>__<name>`, the namespace's description before the function's; its calls go back to the caller as
 * calls into the namespace (translateRequest's memo).
 */
function namespaceTools(t: Obj, path: string, g: Guard): Tool[] {
  g.members(t, 'tools[]', path, ['type', 'name', 'description', 'tools']);
  const namespace = text(t.name, at(path, 'name'));
  const about = str(t.description);
  return list(t.tools, at(path, 'tools')).map((inner, j) => {
    const where = at(at(path, 'tools'), j);
    g.check(`tools[].type: ${JSON.stringify(inner.type)}`, at(where, 'type'), inner.type);
    if (inner.type !== 'function' && inner.type !== 'custom')
      throw new TranslationError(
        at(where, 'type'),
        `${at(where, 'type')}: only functions and custom tools are translated inside a namespace`,
      );
    const tool = oneTool(inner, where, g);
    const description = [about && `(${namespace}) ${about}`, tool.description].filter(Boolean).join('\n\n');
    return { ...tool, name: namespacedName(namespace, tool.name), ...(description ? { description } : {}) };
  });
}

/** The one argument a free-form tool takes, as a function. */
export const CUSTOM_INPUT = {
  type: 'object',
  properties: { input: { type: 'string', description: 'The tool’s input, as free-form text' } },
  required: ['input'],
};

/** A free-form (custom) tool as a function of one string, its grammar told in the description. */
function customTool(t: Obj, path: string, g: Guard): Tool {
  g.members(t, 'tools[]', path, ['type', 'name', 'description', 'format']);
  const format = obj(t.format);
  let description = str(t.description) ?? '';
  if (format.type === 'grammar') {
    const syntax = str(format.syntax) ?? 'lark';
    const definition = text(format.definition, at(at(path, 'format'), 'definition'));
    description += `${description ? '\n\n' : ''}The input must follow this ${syntax} grammar:\n${definition}`;
  }
  return {
    name: text(t.name, at(path, 'name')),
    ...(description ? { description } : {}),
    parameters: CUSTOM_INPUT,
  };
}

function readToolChoice(choice: unknown, g: Guard): Request['toolChoice'] {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return { mode: choice };
  if (!isObj(choice))
    throw new TranslationError('tool_choice', `tool_choice: ${JSON.stringify(choice)} is not a tool choice`);
  if (choice.type !== 'function' && choice.type !== 'custom') {
    g.check('tool_choice.type (other than function and custom)', 'tool_choice.type', choice.type);
  }
  return { mode: 'tool', name: text(choice.name, 'tool_choice.name') };
}

function readText(config: Obj, g: Guard, req: Request): void {
  g.members(config, 'text', 'text', ['format']);
  if (config.format == null) return;
  const format = obj(config.format);
  const handling = g.check(
    `text.format.type: ${JSON.stringify(format.type)}`,
    'text.format.type',
    format.type,
  );
  if (handling.how === 'dropped') return;
  if (format.type === 'json_object') {
    req.output = { kind: 'json_object' };
    return;
  }
  req.output = {
    kind: 'json_schema',
    schema: obj(format.schema),
    ...(typeof format.name === 'string' ? { name: format.name } : {}),
    ...(typeof format.description === 'string' ? { description: format.description } : {}),
    ...(typeof format.strict === 'boolean' ? { strict: format.strict } : {}),
  };
}

function readReasoning(config: Obj, g: Guard, req: Request): void {
  g.members(config, 'reasoning', 'reasoning', ['effort']);
  const effort = config.effort;
  const summary = config.summary ?? config.generate_summary;
  const show =
    summary != null &&
    !g.drops(
      config.summary != null ? 'reasoning.summary' : 'reasoning.generate_summary',
      'reasoning.summary',
      summary,
    );
  if (effort == null) {
    if (show) req.reasoning = { adaptive: true, show };
    return;
  }
  if (!EFFORTS.includes(effort as Effort)) {
    throw new TranslationError(
      'reasoning.effort',
      `reasoning.effort: ${JSON.stringify(effort)} is not an effort`,
    );
  }
  req.reasoning = { effort: effort as Effort, show };
}
