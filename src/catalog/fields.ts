import { z } from 'zod';

/**
 * Field builders for model inputs. Every rule carries the message a client sees, naming the field and the rule
 * (`input.duration must be -1 or an integer from 2 to 30`), so one zod definition per family is both the
 * validator and the source of the JSON Schema.
 */
export const at = (name: string) => `input.${name}`;

type Issue = { input?: unknown };
const requiredOr = (name: string, rule: string) => (issue: Issue) =>
  issue.input === undefined ? `${at(name)} is required` : `${at(name)} ${rule}`;

export function oneOf<const T extends readonly [string, ...string[]]>(name: string, values: T) {
  return z.enum(values, { error: requiredOr(name, `must be one of ${values.join(', ')}`) });
}

export function bool(name: string) {
  return z.boolean({ error: requiredOr(name, 'must be true or false') });
}

export interface TextRules {
  min?: number;
  max?: number;
  /** Length counted in UTF-8 bytes instead of characters. */
  bytes?: boolean;
  /** Must hold something other than whitespace. */
  nonBlank?: boolean;
}

export function text(name: string, { min = 0, max, bytes = false, nonBlank = false }: TextRules = {}) {
  const unit = bytes ? 'UTF-8 bytes' : 'characters';
  const length = (s: string) => (bytes ? Buffer.byteLength(s, 'utf8') : [...s].length);
  let schema = z.string({ error: requiredOr(name, 'must be a string') });
  if (nonBlank)
    schema = schema.refine((s) => s.trim().length > 0, { error: `${at(name)} must not be empty` });
  if (min > 0 && !nonBlank)
    schema = schema.refine((s) => length(s) >= min, { error: `${at(name)} must not be empty` });
  if (max !== undefined) {
    schema = schema.refine((s) => length(s) <= max, { error: `${at(name)} must be at most ${max} ${unit}` });
  }
  return schema.meta({ description: `${min}${max ? ` to ${max}` : '+'} ${unit}` });
}

export function int(name: string, min: number, max: number) {
  return z
    .number({ error: requiredOr(name, `must be an integer from ${min} to ${max}`) })
    .int({ error: `${at(name)} must be an integer from ${min} to ${max}` })
    .min(min, { error: `${at(name)} must be an integer from ${min} to ${max}` })
    .max(max, { error: `${at(name)} must be an integer from ${min} to ${max}` });
}

/** An integer or its decimal-digit string (`10` or `"10"`; not `"6.5"`, `"-1.0"` or `" 6"`), read as a number. */
export function intOrNumericString(name: string, allowed: (n: number) => boolean, rule: string) {
  const message = `${at(name)} must be ${rule}`;
  return z
    .union([z.number().int({ error: message }), z.string().regex(/^-?\d+$/, { error: message })], {
      error: requiredOr(name, `must be ${rule}`),
    })
    .transform((v) => Number(v))
    .refine(allowed, { error: message });
}

/** A list of http(s) URLs with a count bound. */
export function urlList(name: string, min: number, max: number) {
  const count = min === max ? `exactly ${min}` : `${min} to ${max}`;
  return z
    .array(
      z
        .string({ error: `${at(name)} must hold URL strings` })
        .refine(isHttpUrl, { error: `${at(name)} must hold http(s) URLs` }),
      { error: requiredOr(name, 'must be an array of URL strings') },
    )
    .min(min, { error: `${at(name)} must hold ${count} URL${max === 1 ? '' : 's'}` })
    .max(max, { error: `${at(name)} must hold ${count} URL${max === 1 ? '' : 's'}` });
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** True when `value` carries a non-empty array under `key`. */
export function has(value: Record<string, unknown>, key: string): boolean {
  const v = value[key];
  return Array.isArray(v) && v.length > 0;
}
