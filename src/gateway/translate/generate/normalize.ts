import { isObj } from '../shared';

/**
 * The REST API of generateContent takes both spellings of its field names (`system_instruction` and
 * `systemInstruction`); requests are read in camelCase. Values that are the caller's own data keep their keys:
 * function arguments and responses, JSON schemas, labels.
 */
const OWN_DATA = new Set([
  'args',
  'response',
  'responseJsonSchema',
  'parametersJsonSchema',
  'responseSchema',
  'parameters',
  'labels',
  'partMetadata',
]);

const SNAKE = /_([a-z0-9])/g;
const toCamel = (key: string): string =>
  key.includes('_') ? key.replace(SNAKE, (_, c: string) => c.toUpperCase()) : key;

/** `value` with camelCase keys: the same object when it already has them (the SDKs send camelCase). */
export function camelKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = camelKeys(value[i]);
      if (item !== value[i]) (out ??= value.slice())[i] = item;
    }
    return out ?? value;
  }
  if (!isObj(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    const name = toCamel(key);
    const member = OWN_DATA.has(name) ? value[key] : camelKeys(value[key]);
    if (name !== key || member !== value[key]) {
      if (!out) {
        out = {};
        // The members before this one, unchanged.
        for (const k in value) {
          if (k === key) break;
          out[k] = value[k];
        }
      }
    }
    if (out) out[name] = member;
  }
  return out ?? value;
}
