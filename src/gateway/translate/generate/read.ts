import { REDACTED } from '../ids';
import type { Effort, Message, Part, Reasoning, Request, Source, TextPart, Tool } from '../ir';
import { documentOf, imageOf, numberField, stopList, toolParameters } from '../read-common';
import { isObj, list, obj, str, text, type Obj } from '../shared';
import { at, TranslationError, type Guard } from '../table';
import { camelKeys } from './normalize';
import { jsonSchemaOf } from './schema';

/** A generateContent request (either spelling of its keys), read into the intermediate form. */
export function readGenerateRequest(raw: Obj, g: Guard, stream: boolean): Request {
  const body = camelKeys(raw) as Obj;
  g.top(body);
  const req: Request = {
    system: body.systemInstruction == null ? [] : systemParts(body.systemInstruction),
    messages: readContents(list(body.contents, 'contents'), g),
    stream,
  };
  if (body.tools != null) req.tools = readTools(list(body.tools, 'tools'), g);
  if (body.toolConfig != null) readToolConfig(obj(body.toolConfig), g, req);
  if (body.generationConfig != null) readGenerationConfig(obj(body.generationConfig), g, req);
  return req;
}

/** Instructions: a Content (its role ignored), or a bare string (the REST API takes one). */
function systemParts(value: unknown): TextPart[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  const parts = list(obj(value).parts, 'systemInstruction.parts');
  return parts.map((p, i) => {
    const path = at('systemInstruction.parts', i);
    if (typeof p.text !== 'string') {
      throw new TranslationError(path, `${path}: only text parts are translated in instructions`);
    }
    return { type: 'text', text: p.text };
  });
}

function readContents(contents: Obj[], g: Guard): Message[] {
  const out: Message[] = [];
  // The calls of the latest model turn, by name, whose responses have not come: a response without an id answers
  // the first of them.
  let open = new Map<string, string[]>();
  const names = new Map<string, string>();
  contents.forEach((c, i) => {
    const path = at('contents', i);
    const role = c.role ?? 'user';
    g.check(`contents[].role: ${JSON.stringify(role)}`, at(path, 'role'), role);
    const model = role === 'model';
    if (model) open = new Map();
    const parts: Part[] = [];
    let thought: { text: string; signature?: string } | undefined;
    const flushThought = () => {
      const signature = thought?.signature;
      if (signature?.startsWith(REDACTED)) {
        parts.push({ type: 'thinking', text: '', redacted: signature.slice(REDACTED.length) });
      } else if (signature) parts.push({ type: 'thinking', text: thought!.text, signature });
      thought = undefined;
    };
    list(c.parts, at(path, 'parts')).forEach((p, j) => {
      const here = at(at(path, 'parts'), j);
      g.members(p, 'contents[].parts[]', here, []);
      if (p.thought === true) {
        if (g.drops('contents[].parts[].thought', at(here, 'thought'), true)) return;
        thought = { text: (thought?.text ?? '') + (str(p.text) ?? '') };
        // The signature comes on a thought's last part.
        const signature = str(p.thoughtSignature);
        if (signature) {
          thought.signature = signature;
          flushThought();
        }
        return;
      }
      flushThought();
      const part = readPart(p, here, g, i, j, open, names);
      if (part) parts.push(part);
    });
    flushThought();
    out.push({ role: model ? 'assistant' : 'user', content: parts });
  });
  return out;
}

function readPart(
  p: Obj,
  path: string,
  g: Guard,
  turn: number,
  index: number,
  open: Map<string, string[]>,
  names: Map<string, string>,
): Part | undefined {
  if (typeof p.text === 'string') return { type: 'text', text: p.text };
  if (p.inlineData != null) {
    const data = obj(p.inlineData);
    const source: Source = {
      kind: 'base64',
      mediaType: text(data.mimeType, at(at(path, 'inlineData'), 'mimeType')),
      data: text(data.data, at(at(path, 'inlineData'), 'data')),
    };
    return media(source, at(path, 'inlineData'), g);
  }
  if (p.fileData != null) return fileData(obj(p.fileData), at(path, 'fileData'), g);
  if (p.functionCall != null) {
    const call = obj(p.functionCall);
    const name = text(call.name, at(at(path, 'functionCall'), 'name'));
    const id = str(call.id) || `call_${turn}_${index}`;
    open.set(name, [...(open.get(name) ?? []), id]);
    names.set(id, name);
    const args = call.args ?? {};
    if (!isObj(args))
      throw new TranslationError(at(at(path, 'functionCall'), 'args'), 'args must be an object');
    return { type: 'tool_call', id, name, args };
  }
  if (p.functionResponse != null)
    return functionResponse(obj(p.functionResponse), at(path, 'functionResponse'), g, open, names);
  return undefined;
}

function functionResponse(
  r: Obj,
  path: string,
  g: Guard,
  open: Map<string, string[]>,
  names: Map<string, string>,
): Part {
  g.members(r, 'contents[].parts[].functionResponse', path, ['id', 'name', 'response']);
  let id = str(r.id);
  const name = str(r.name) ?? (id ? names.get(id) : undefined);
  if (!name) throw new TranslationError(at(path, 'name'), `${at(path, 'name')} is required`);
  const pending = open.get(name) ?? [];
  if (!id) id = pending.shift();
  else if (pending.includes(id)) pending.splice(pending.indexOf(id), 1);
  if (!id) {
    throw new TranslationError(
      path,
      `${path}: no functionCall named ${name} comes before it in the latest model turn`,
    );
  }
  const response = obj(r.response);
  const keys = Object.keys(response);
  const isError = keys.length === 1 && keys[0] === 'error';
  const only = keys.length === 1 ? response[keys[0]!] : undefined;
  const content: (Part & { type: 'text' | 'image' | 'document' })[] = [
    {
      type: 'text',
      text: typeof only === 'string' && (keys[0] === 'output' || isError) ? only : JSON.stringify(response),
    },
  ];
  if (Array.isArray(r.parts)) {
    list(r.parts, at(path, 'parts')).forEach((p, k) => {
      const here = at(at(path, 'parts'), k);
      if (p.inlineData != null) {
        const data = obj(p.inlineData);
        const source: Source = {
          kind: 'base64',
          mediaType: text(data.mimeType, at(at(here, 'inlineData'), 'mimeType')),
          data: text(data.data, at(at(here, 'inlineData'), 'data')),
        };
        content.push(media(source, at(here, 'inlineData'), g) as Part & { type: 'image' | 'document' });
      } else if (p.fileData != null) {
        content.push(
          fileData(obj(p.fileData), at(here, 'fileData'), g) as Part & { type: 'image' | 'document' },
        );
      } else throw new TranslationError(here, `${here}: only inlineData and fileData are translated`);
    });
  }
  return { type: 'tool_result', id, name, content, ...(isError ? { isError: true } : {}) };
}

/** Bytes: an image, a PDF or plain text (Gemini's other types, audio and video, have no equivalent). */
function media(source: Source & { kind: 'base64' }, path: string, g: Guard): Part {
  if (source.mediaType.startsWith('image/')) return imageOf(source, path, g.target);
  if (source.mediaType === 'application/pdf' || source.mediaType === 'text/plain') {
    return documentOf(source, path, g.target);
  }
  throw new TranslationError(
    at(path, 'mimeType'),
    `${at(path, 'mimeType')}: ${source.mediaType} has no equivalent in the target format (images, PDF and plain text are translated)`,
  );
}

/** A file by URI: public http(s) URLs only; Gemini's Files API and Cloud Storage need Google's credentials. */
function fileData(f: Obj, path: string, g: Guard): Part {
  const uri = text(f.fileUri, at(path, 'fileUri'));
  if (!/^https?:\/\//.test(uri) || uri.includes('generativelanguage.googleapis.com')) {
    throw new TranslationError(
      at(path, 'fileUri'),
      `${at(path, 'fileUri')}: a Gemini Files API or gs:// file cannot be read by the target (public http(s) URLs are translated)`,
    );
  }
  const mimeType = str(f.mimeType);
  if (mimeType?.startsWith('image/'))
    return { type: 'image', source: { kind: 'url', url: uri, mediaType: mimeType } };
  g.check('contents[].parts[].fileData (document)', path, uri);
  return { type: 'document', source: { kind: 'url', url: uri, mediaType: mimeType ?? 'application/pdf' } };
}

function readTools(tools: Obj[], g: Guard): Tool[] {
  const out: Tool[] = [];
  tools.forEach((t, i) => {
    const path = at('tools', i);
    for (const key in t) {
      if (key === 'functionDeclarations') g.check('tools[].functionDeclarations', at(path, key), t[key]);
      else g.check('tools[] (built-in tools)', at(path, key), key);
    }
    list(t.functionDeclarations ?? [], at(path, 'functionDeclarations')).forEach((f, j) => {
      const here = at(at(path, 'functionDeclarations'), j);
      g.members(f, 'tools[].functionDeclarations[]', here, ['name', 'description']);
      const schema = f.parametersJsonSchema ?? (isObj(f.parameters) ? jsonSchemaOf(f.parameters) : undefined);
      const tool: Tool = {
        name: text(f.name, at(here, 'name')),
        parameters: toolParameters(schema, at(here, 'parameters')),
      };
      if (typeof f.description === 'string') tool.description = f.description;
      out.push(tool);
    });
  });
  return out;
}

function readToolConfig(config: Obj, g: Guard, req: Request): void {
  g.members(config, 'toolConfig', 'toolConfig', ['functionCallingConfig']);
  const calling = obj(config.functionCallingConfig);
  const path = 'toolConfig.functionCallingConfig';
  g.members(calling, path, path, []);
  const mode = calling.mode;
  if (mode === 'VALIDATED') g.check(`${path}.mode: "VALIDATED"`, at(path, 'mode'), mode);
  const allowed = calling.allowedFunctionNames;
  if (Array.isArray(allowed) && allowed.length > 1) {
    throw new TranslationError(
      at(path, 'allowedFunctionNames'),
      `${at(path, 'allowedFunctionNames')}: only one allowed name is translated (as a named tool choice)`,
    );
  }
  const only = Array.isArray(allowed) && allowed.length === 1 ? String(allowed[0]) : undefined;
  if (mode === 'NONE') req.toolChoice = { mode: 'none' };
  else if (mode === 'ANY') req.toolChoice = only ? { mode: 'tool', name: only } : { mode: 'required' };
  else if (mode === 'AUTO' || mode == null || mode === 'MODE_UNSPECIFIED') {
    if (only)
      throw new TranslationError(
        at(path, 'allowedFunctionNames'),
        `${at(path, 'allowedFunctionNames')} is translated with mode ANY only`,
      );
    if (mode === 'AUTO') req.toolChoice = { mode: 'auto' };
  } else
    throw new TranslationError(
      at(path, 'mode'),
      `${at(path, 'mode')}: ${JSON.stringify(mode)} is not a mode`,
    );
}

function readGenerationConfig(config: Obj, g: Guard, req: Request): void {
  const path = 'generationConfig';
  g.members(config, path, path, []);
  const take = (key: string) =>
    g.drops(`${path}.${key}`, at(path, key), config[key]) ? undefined : config[key];
  const number = (key: string) => numberField({ [at(path, key)]: take(key) }, at(path, key));
  req.temperature = number('temperature');
  req.topP = number('topP');
  req.topK = number('topK');
  req.maxTokens = number('maxOutputTokens');
  req.presencePenalty = number('presencePenalty');
  req.frequencyPenalty = number('frequencyPenalty');
  req.seed = number('seed');
  req.stop = stopList(config.stopSequences, at(path, 'stopSequences'));
  const mime = config.responseMimeType;
  const schema =
    config.responseJsonSchema ??
    (isObj(config.responseSchema) ? jsonSchemaOf(config.responseSchema) : undefined);
  if (mime === 'text/x.enum')
    g.check(`${path}.responseMimeType: "text/x.enum"`, at(path, 'responseMimeType'), mime);
  if (mime === 'application/json') {
    if (isObj(schema)) req.output = { kind: 'json_schema', schema };
    else {
      g.check(`${path}.responseMimeType: "application/json" (no schema)`, at(path, 'responseMimeType'), mime);
      req.output = { kind: 'json_object' };
    }
  } else if (mime != null && mime !== 'text/plain') {
    throw new TranslationError(
      at(path, 'responseMimeType'),
      `${at(path, 'responseMimeType')}: ${JSON.stringify(mime)} is not translated`,
    );
  }
  if (config.thinkingConfig != null) req.reasoning = readThinking(obj(config.thinkingConfig), g);
}

function readThinking(t: Obj, g: Guard): Reasoning | undefined {
  const path = 'generationConfig.thinkingConfig';
  g.members(t, path, path, []);
  // Gemini shows no thoughts unless asked.
  const show = t.includeThoughts === true;
  const level = str(t.thinkingLevel);
  if (level && level !== 'THINKING_LEVEL_UNSPECIFIED') return { effort: level.toLowerCase() as Effort, show };
  const budget = numberField(t, 'thinkingBudget');
  if (budget === undefined) return show ? { adaptive: true, show } : undefined;
  if (budget === 0) return { effort: 'none' };
  if (budget < 0) return { adaptive: true, show };
  return { budget, show };
}
