import { mintId } from './shared';

/**
 * Tool-call ids across formats. Gemini's function calls may come without an id (one is minted) and, on thinking
 * models, with a thought signature that must come back on that call next turn. Every caller format echoes a tool
 * call's id with its result, so the signature travels inside the id: `<id>__gs_<the signature's bytes as base64url>`
 * (any signature comes back exactly). The Gemini writer takes it out again; other targets see an opaque id made of the
 * characters every format accepts.
 */
const MARK = '__gs_';

export function idWithSignature(id: string | undefined, signature: string | undefined): string {
  const base = id || mintId('call_');
  if (!signature) return base;
  return `${base}${MARK}${Buffer.from(signature).toString('base64url')}`;
}

/** The id Gemini gave (or none, when it was minted) and the thought signature an id carries. */
export function splitId(id: string): { id: string; signature?: string } {
  const mark = id.indexOf(MARK);
  if (mark === -1) return { id };
  return {
    id: id.slice(0, mark),
    signature: Buffer.from(id.slice(mark + MARK.length), 'base64url').toString(),
  };
}

const MESSAGES_ID = /^[a-zA-Z0-9_-]+$/;
const NOT_IN_MESSAGES_ID = /[^a-zA-Z0-9_-]/g;

/** An id the messages format accepts (`^[a-zA-Z0-9_-]+$`), the same for a call and its result. */
export const messagesId = (id: string): string =>
  MESSAGES_ID.test(id) ? id : id.replace(NOT_IN_MESSAGES_ID, '_');

/**
 * Anthropic's redacted thinking has no text, only opaque data: it travels where other formats keep a signature
 * (a Responses reasoning item's `encrypted_content`, a Gemini thought's `thoughtSignature`), behind this mark.
 */
export const REDACTED = 'redacted:';
