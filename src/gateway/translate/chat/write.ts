import type { Message, Part, Request } from '../ir';
import { dataUrl, joinText, type Obj } from '../shared';
import { effortOfBudget, mergeTurns, resultText } from '../write-common';

/**
 * An intermediate request as a chat completions body, for `model`. A stream always asks for usage
 * (`stream_options.include_usage`): the gateway meters every stream, and other callers get usage in their own shape.
 */
export function writeChatRequest(req: Request, model: string): Obj {
  const messages: Obj[] = [];
  if (req.system.length) messages.push({ role: 'system', content: joinText(req.system) });
  for (const m of mergeTurns(req.messages)) messages.push(...chatMessages(m));
  const body: Obj = { model, messages };
  if (req.maxTokens !== undefined) body.max_completion_tokens = req.maxTokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.stop?.length) body.stop = req.stop;
  if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
  if (req.presencePenalty !== undefined) body.presence_penalty = req.presencePenalty;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.tools?.length) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.parameters,
        ...(t.strict !== undefined ? { strict: t.strict } : {}),
      },
    }));
  }
  if (req.toolChoice) {
    const c = req.toolChoice;
    body.tool_choice = c.mode === 'tool' ? { type: 'function', function: { name: c.name } } : c.mode;
  }
  if (req.parallelToolCalls === false && req.tools?.length) body.parallel_tool_calls = false;
  if (req.output?.kind === 'json_object') body.response_format = { type: 'json_object' };
  if (req.output?.kind === 'json_schema') {
    const o = req.output;
    body.response_format = {
      type: 'json_schema',
      json_schema: {
        name: o.name ?? 'output',
        ...(o.description ? { description: o.description } : {}),
        schema: o.schema,
        ...(o.strict !== undefined ? { strict: o.strict } : {}),
      },
    };
  }
  const effort = req.reasoning && effortOfBudget(req.reasoning);
  if (effort) body.reasoning_effort = effort;
  if (req.user) body.user = req.user;
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

/** One turn as chat messages: a user turn's tool results become `tool` messages, ahead of the rest. */
function chatMessages(m: Message): Obj[] {
  if (m.role === 'system') return [{ role: 'system', content: joinText(m.content as { text: string }[]) }];
  if (m.role === 'assistant') return [assistant(m.content)];
  const out: Obj[] = [];
  const rest: Part[] = [];
  for (const part of m.content) {
    if (part.type === 'tool_result') {
      out.push({ role: 'tool', tool_call_id: part.id, content: resultText(part.content) });
    } else rest.push(part);
  }
  if (rest.length) out.push({ role: 'user', content: userContent(rest) });
  return out;
}

function assistant(parts: Part[]): Obj {
  const texts = parts.filter((p) => p.type === 'text' || p.type === 'refusal') as { text: string }[];
  const calls = parts.filter((p) => p.type === 'tool_call');
  const message: Obj = {
    role: 'assistant',
    content: texts.length ? texts.map((t) => t.text).join('') : null,
  };
  if (calls.length) {
    message.tool_calls = calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.args) },
    }));
  }
  return message;
}

function userContent(parts: Part[]): string | Obj[] {
  if (parts.length === 1 && parts[0]!.type === 'text') return parts[0]!.text;
  const out: Obj[] = [];
  for (const p of parts) {
    if (p.type === 'text') out.push({ type: 'text', text: p.text });
    else if (p.type === 'image') {
      const url =
        p.source.kind === 'base64'
          ? dataUrl(p.source.mediaType, p.source.data)
          : (p.source as { url: string }).url;
      out.push({ type: 'image_url', image_url: { url } });
    } else if (p.type === 'document') {
      if (p.source.kind === 'text') out.push({ type: 'text', text: p.source.text });
      else if (p.source.kind === 'base64') {
        const filename = p.title ?? 'document.pdf';
        out.push({ type: 'file', file: { filename, file_data: dataUrl(p.source.mediaType, p.source.data) } });
      }
    }
  }
  return out;
}
