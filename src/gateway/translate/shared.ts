import { randomBytes } from 'node:crypto';
import type { Source } from './ir';
import { TranslationError } from './table';

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const obj = (v: unknown): Obj => (isObj(v) ? v : {});
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined;
/** A non-negative whole count from a vendor's JSON (0 for anything else). */
export const count = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;

/** `value` as an array of objects, or a TranslationError naming `path`. */
export function list(value: unknown, path: string): Obj[] {
  if (!Array.isArray(value) || !value.every(isObj)) {
    throw new TranslationError(path, `${path} must be an array of objects`);
  }
  return value;
}

/** `value` as a string, or a TranslationError naming `path`. */
export function text(value: unknown, path: string): string {
  if (typeof value !== 'string') throw new TranslationError(path, `${path} must be a string`);
  return value;
}

/** Random id characters (base 62), for the ids a format needs and the target did not give. */
export function mintId(prefix: string, length = 24): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  let out = prefix;
  for (let i = 0; i < length; i++) out += alphabet[bytes[i]! % 62];
  return out;
}

const DATA_URL = /^data:([^;,]+)?((?:;[^;,]+)*?);base64,/;

/** An image or file reference written as a URL: a base64 `data:` URL becomes bytes, an http(s) URL stays one. */
export function sourceOfUrl(url: string, path: string): Source {
  if (url.startsWith('data:')) {
    const m = DATA_URL.exec(url);
    if (!m) throw new TranslationError(path, `${path}: only base64 data: URLs are translated`);
    return { kind: 'base64', mediaType: m[1] ?? 'application/octet-stream', data: url.slice(m[0].length) };
  }
  if (url.startsWith('https://') || url.startsWith('http://')) {
    const mediaType = mediaTypeOfUrl(url);
    return mediaType ? { kind: 'url', url, mediaType } : { kind: 'url', url };
  }
  throw new TranslationError(path, `${path}: only http(s) and base64 data: URLs are translated`);
}

export const dataUrl = (mediaType: string, data: string): string => `data:${mediaType};base64,${data}`;

const EXTENSIONS: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  txt: 'text/plain',
};

/** The media type a URL's file extension names, if any. */
export function mediaTypeOfUrl(url: string): string | undefined {
  const path = url.split(/[?#]/, 1)[0]!;
  const dot = path.lastIndexOf('.');
  if (dot === -1 || dot < path.lastIndexOf('/')) return undefined;
  return EXTENSIONS[path.slice(dot + 1).toLowerCase()];
}

/** Parses a tool call's arguments written as JSON text (chat, Responses): an object, or a TranslationError. */
export function parseArgs(text: string, path: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TranslationError(
      path,
      `${path} is not valid JSON, and the target takes the arguments as an object`,
    );
  }
  if (!isObj(value)) throw new TranslationError(path, `${path} must be a JSON object`);
  return value;
}

/** Text of several text parts, joined as one. */
export const joinText = (parts: readonly { text: string }[]): string => parts.map((p) => p.text).join('\n\n');

/** Seconds since the epoch, as `created` fields want. */
export const nowSeconds = (): number => Math.floor(Date.now() / 1000);
