import { VENDOR_BY_NAME } from '../vendors';
import { isObj, obj, str } from './shared';
import { parseJson } from './sse';
import { formatName, type CallFormat, type TargetFormat } from './table';

/** Each format's error body, read from a target and written for a caller (Genway's own vendor error bodies). */

const VENDOR_OF: Record<CallFormat, 'openai' | 'anthropic' | 'gemini'> = {
  chat: 'openai',
  responses: 'openai',
  messages: 'anthropic',
  generate: 'gemini',
};

/** The caller's error body for `status` and `message`, as Genway's own errors in that format are written. */
export function errorBody(to: CallFormat, status: number, message: string): unknown {
  return VENDOR_BY_NAME[VENDOR_OF[to]].errorBody(status, message);
}

/** What a target's error body says: its type or status name, and its message (undefined when it cannot be read). */
export function readError(from: TargetFormat, body: Buffer): { kind?: string; message: string } | undefined {
  let json = parseJson(body.toString('utf8'));
  // Gemini answers some errors as a one-element array.
  if (Array.isArray(json) && json.length === 1) json = json[0];
  if (!isObj(json)) return undefined;
  const error = json.error;
  if (typeof error === 'string') return { message: error };
  if (!isObj(error)) return typeof json.message === 'string' ? { message: json.message } : undefined;
  const message = str(error.message);
  if (message === undefined) return undefined;
  const kind = from === 'generate' ? str(error.status) : (str(error.type) ?? str(obj(error).code));
  return { ...(kind ? { kind } : {}), message };
}

/** A target's error answer as the caller's error body, with a message that says where it came from. */
export function translateError(from: TargetFormat, to: CallFormat, status: number, body: Buffer): Buffer {
  const read = readError(from, body);
  const where = `the upstream (${formatName(from)} format) answered ${status}`;
  let message: string;
  if (read) message = `${where}${read.kind ? ` ${read.kind}` : ''}: ${read.message}`;
  else {
    const text = body.toString('utf8').trim().slice(0, 300);
    message = `${where} with a body that is not a ${formatName(from)} error${text ? `: ${text}` : ''}`;
  }
  return Buffer.from(JSON.stringify(errorBody(to, status, message)));
}
