import { splitId } from '../ids';
import type { Effort, Part, Reasoning, Request, Source } from '../ir';
import type { Obj } from '../shared';
import { mergeTurns, resultText } from '../write-common';

/**
 * An intermediate request as a generateContent body. The model goes in the path (the gateway builds it), so the body
 * names none.
 */
export function writeGenerateRequest(req: Request): Obj {
  const system = [...req.system];
  const contents: Obj[] = [];
  for (const m of mergeTurns(req.messages)) {
    // Gemini has no system turn: later instructions join the leading ones (docs/translation.md).
    if (m.role === 'system') {
      system.push(...(m.content as { type: 'text'; text: string }[]));
      continue;
    }
    const parts = m.content.map(partOf).filter((p): p is Obj => p !== undefined);
    if (parts.length) contents.push({ role: m.role === 'assistant' ? 'model' : 'user', parts });
  }
  const body: Obj = { contents };
  if (system.length) body.systemInstruction = { parts: system.map((t) => ({ text: t.text })) };
  if (req.tools?.length) {
    body.tools = [
      {
        functionDeclarations: req.tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          ...(isEmptySchema(t.parameters) ? {} : { parametersJsonSchema: t.parameters }),
        })),
      },
    ];
  }
  if (req.toolChoice) {
    const c = req.toolChoice;
    const mode = c.mode === 'auto' ? 'AUTO' : c.mode === 'none' ? 'NONE' : 'ANY';
    body.toolConfig = {
      functionCallingConfig: { mode, ...(c.mode === 'tool' ? { allowedFunctionNames: [c.name] } : {}) },
    };
  }
  const config = generationConfig(req);
  if (Object.keys(config).length) body.generationConfig = config;
  return body;
}

function generationConfig(req: Request): Obj {
  const config: Obj = {};
  if (req.temperature !== undefined) config.temperature = req.temperature;
  if (req.topP !== undefined) config.topP = req.topP;
  if (req.topK !== undefined) config.topK = req.topK;
  if (req.maxTokens !== undefined) config.maxOutputTokens = req.maxTokens;
  if (req.stop?.length) config.stopSequences = req.stop;
  if (req.presencePenalty !== undefined) config.presencePenalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) config.frequencyPenalty = req.frequencyPenalty;
  if (req.seed !== undefined) config.seed = req.seed;
  if (req.output) {
    config.responseMimeType = 'application/json';
    if (req.output.kind === 'json_schema') config.responseJsonSchema = req.output.schema;
  }
  if (req.reasoning) config.thinkingConfig = thinkingConfig(req.reasoning);
  return config;
}

const LEVELS: Record<Exclude<Effort, 'none'>, string> = {
  minimal: 'MINIMAL',
  low: 'LOW',
  medium: 'MEDIUM',
  high: 'HIGH',
  xhigh: 'HIGH',
  max: 'HIGH',
};

/** A level as `thinkingLevel`, a budget as `thinkingBudget` (-1: the model decides; 0: off). */
function thinkingConfig(r: Reasoning): Obj {
  const config: Obj = {};
  if (r.effort === 'none') config.thinkingBudget = 0;
  else if (r.effort) config.thinkingLevel = LEVELS[r.effort];
  else if (r.budget !== undefined) config.thinkingBudget = r.budget;
  else if (r.adaptive) config.thinkingBudget = -1;
  if (r.show && config.thinkingBudget !== 0) config.includeThoughts = true;
  return config;
}

function partOf(part: Part): Obj | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return part.text ? { text: part.text } : undefined;
    case 'image':
    case 'document':
      return media(part.source, part.type === 'document' ? 'application/pdf' : undefined);
    case 'tool_call': {
      const { id, signature } = splitId(part.id);
      return {
        functionCall: { id, name: part.name, args: part.args },
        ...(signature ? { thoughtSignature: signature } : {}),
      };
    }
    case 'tool_result': {
      const text = resultText(part.content);
      const files = part.content.filter((c) => c.type !== 'text' && c.source.kind !== 'text');
      return {
        functionResponse: {
          id: splitId(part.id).id,
          name: part.name,
          response: part.isError ? { error: text } : { output: text },
          ...(files.length
            ? { parts: files.map((f) => media((f as { source: Source }).source, 'application/octet-stream')) }
            : {}),
        },
      };
    }
    case 'thinking':
      return undefined;
  }
}

function media(s: Source, fallbackType: string | undefined): Obj {
  if (s.kind === 'base64') return { inlineData: { mimeType: s.mediaType, data: s.data } };
  if (s.kind === 'text')
    return { inlineData: { mimeType: 'text/plain', data: Buffer.from(s.text).toString('base64') } };
  const mimeType = s.mediaType ?? fallbackType;
  return { fileData: { fileUri: s.url, ...(mimeType ? { mimeType } : {}) } };
}

const isEmptySchema = (schema: Record<string, unknown>): boolean => {
  const props = schema.properties;
  return (
    Object.keys(schema).every((k) => k === 'type' || k === 'properties') &&
    (props === undefined || (typeof props === 'object' && props !== null && !Object.keys(props).length))
  );
};
