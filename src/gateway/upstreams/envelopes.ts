import { editJson, type JsonEdits } from '../json-edit';
import type { Envelope, ModelCall } from './types';

/**
 * The messages format in its three envelopes. Anthropic's API takes the model and `stream` in the body and the
 * version and betas as headers; Bedrock's InvokeModel the model and the stream in the path, `anthropic_version`
 * (`bedrock-2023-05-31`) and `anthropic_beta` in the body; Vertex's rawPredict the model and the action in the path,
 * `anthropic_version` (`vertex-2023-10-16`) and `stream` in the body, the betas as a header. A call changes envelope
 * by these fields alone: every other byte of the body goes on as sent.
 */

/** The `anthropic_version` each cloud's body carries, and the version header Anthropic's API takes. */
export const BEDROCK_VERSION = 'bedrock-2023-05-31';
export const VERTEX_VERSION = 'vertex-2023-10-16';
export const MESSAGES_VERSION = '2023-06-01';

/** A version a header may carry (a cloud's body version is none: Anthropic's API would refuse it). */
export const headerVersion = (version: string | undefined): string | undefined =>
  version && version !== BEDROCK_VERSION && version !== VERTEX_VERSION ? version : undefined;

/**
 * The body of a messages call in `to`'s envelope, for `model`, and the headers that go with it. The clouds take the
 * model in the path, but for a count of tokens (Vertex's `count-tokens:rawPredict`), which takes it in the body.
 */
export function messagesIn(
  call: ModelCall,
  to: Envelope,
  model: string,
): { body: string; headers: [string, string][]; drop: string[] } {
  const modelInBody = to === 'native' || call.op === 'count';
  const edits: JsonEdits = {};
  const headers: [string, string][] = [];
  const drop: string[] = [];
  const set: Record<string, unknown> = {};
  const remove: string[] = [];
  const from = call.envelope;
  const betas = call.betas;
  if (modelInBody && call.json.model !== model) set.model = model;
  if (to === 'native') {
    if (from !== 'native') remove.push('anthropic_version', 'anthropic_beta');
    if (call.stream && call.json.stream !== true) set.stream = true;
    const version = headerVersion(call.version);
    if (version) headers.push(['anthropic-version', version]);
    if (betas.length) headers.push(['anthropic-beta', betas.join(',')]);
  } else if (to === 'bedrock') {
    remove.push('stream');
    if (!modelInBody) remove.push('model');
    if (from !== 'bedrock') {
      set.anthropic_version = BEDROCK_VERSION;
      if (betas.length) set.anthropic_beta = [...betas];
      else remove.push('anthropic_beta');
    }
    drop.push('anthropic-version', 'anthropic-beta');
  } else {
    if (!modelInBody) remove.push('model');
    if (from !== 'vertex') {
      set.anthropic_version = VERTEX_VERSION;
      remove.push('anthropic_beta');
    }
    if (call.stream && call.json.stream !== true) set.stream = true;
    if (betas.length) headers.push(['anthropic-beta', betas.join(',')]);
    drop.push('anthropic-version');
  }
  if (Object.keys(set).length) edits.set = set;
  if (remove.length) edits.remove = remove.filter((k) => !(k in set));
  const changes = edits.set !== undefined || remove.some((k) => k in call.json);
  return { body: changes ? editJson(call.text, edits) : call.text, headers, drop };
}

/** The betas a messages call names: its `anthropic-beta` header (comma-separated), or a cloud body's `anthropic_beta`. */
export function betasOf(header: string | string[] | undefined, body: unknown): string[] {
  if (Array.isArray(body)) return body.filter((b): b is string => typeof b === 'string' && b !== '');
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  return values.flatMap((v) => v.split(',').map((b) => b.trim())).filter(Boolean);
}
