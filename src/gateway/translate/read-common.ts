import type { DocumentPart, ImagePart, Source, TextPart } from './ir';
import { isObj, list, text, type Obj } from './shared';
import { at, TranslationError, type Guard, type TargetFormat } from './table';

/** Helpers every request reader uses: numbers, stop lists, text-only content, and media each target accepts. */

/** A number field (after `take`, which may drop it), or a TranslationError when it is something else. */
export function numberField(
  body: Obj,
  key: string,
  take: (key: string) => unknown = (k) => body[k],
): number | undefined {
  const value = take(key);
  if (value == null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TranslationError(key, `${key} must be a number`);
  }
  return value;
}

export function stopList(value: unknown, path: string): string[] | undefined {
  if (value == null) return undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((s) => typeof s === 'string')) return value as string[];
  throw new TranslationError(path, `${path} must be a string or an array of strings`);
}

/** Content that may only hold text (a string, or text parts whose type is checked against `base`). */
export function textParts(
  content: unknown,
  path: string,
  base: string,
  g: Guard,
  textType = 'text',
): TextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (content == null) return [];
  return list(content, path).map((p, j) => {
    const here = at(path, j);
    g.check(`${base}.type: ${JSON.stringify(p.type)}`, at(here, 'type'), p.type);
    if (p.type !== textType) {
      throw new TranslationError(at(here, 'type'), `${at(here, 'type')}: only text is accepted here`);
    }
    g.members(p, base, here, ['type', 'text']);
    return { type: 'text', text: text(p.text, at(here, 'text')) };
  });
}

/** A tool's parameters schema: an object (absent: one taking no arguments). */
export function toolParameters(value: unknown, path: string): Record<string, unknown> {
  if (value == null) return { type: 'object', properties: {} };
  if (!isObj(value)) throw new TranslationError(path, `${path} must be a JSON Schema object`);
  return value;
}

/** Image types the messages and chat formats take as bytes (Gemini takes any image type). */
const COMMON_IMAGES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

export function imageOf(source: Source, path: string, target: TargetFormat): ImagePart {
  if (source.kind === 'base64' && target !== 'generate' && !COMMON_IMAGES.has(source.mediaType)) {
    throw new TranslationError(
      path,
      `${path}: an image of type ${source.mediaType} has no equivalent in the target format, which takes JPEG, PNG, ` +
        'GIF and WebP',
    );
  }
  if (source.kind === 'text') throw new TranslationError(path, `${path}: text is not an image`);
  return { type: 'image', source };
}

/**
 * A document: PDF, or plain text (decoded, so each target writes it its own way). Gemini takes other types of bytes
 * too; the messages and chat formats refuse them, naming `path`.
 */
export function documentOf(source: Source, path: string, target: TargetFormat, title?: string): DocumentPart {
  const doc = (s: Source): DocumentPart => ({ type: 'document', source: s, ...(title ? { title } : {}) });
  if (source.kind !== 'base64') return doc(source);
  if (source.mediaType === 'text/plain') {
    return doc({ kind: 'text', text: Buffer.from(source.data, 'base64').toString('utf8') });
  }
  if (source.mediaType === 'application/pdf' || target === 'generate') return doc(source);
  throw new TranslationError(
    path,
    `${path}: a file of type ${source.mediaType} has no equivalent in the target format, which takes PDF and plain ` +
      'text documents',
  );
}
