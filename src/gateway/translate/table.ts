/**
 * The mapping table: for each caller format, each field it may send, what becomes of it on each target format. The
 * readers check every field they meet against it (an unlisted field, or one a target refuses, is a TranslationError
 * naming it), and docs/translation.md is rendered from it (scripts/translation-table.js), so the documentation and
 * the code cannot drift apart.
 */

export type CallFormat = 'chat' | 'messages' | 'generate' | 'responses';
export type TargetFormat = 'chat' | 'messages' | 'generate';

/** A field the target cannot express (no documented equivalent): answered as a 400 in the caller's error shape. */
export class TranslationError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'TranslationError';
  }
}

export type How = 'passed' | 'mapped' | 'dropped' | 'refused';

export interface Handling {
  how: How;
  /** What it becomes on the target (passed, mapped), or why not (dropped, refused). */
  note: string;
}

export const passed = (note = 'as is'): Handling => ({ how: 'passed', note });
export const mapped = (note: string): Handling => ({ how: 'mapped', note });
export const dropped = (note: string): Handling => ({ how: 'dropped', note });
export const refused = (note: string): Handling => ({ how: 'refused', note });

export interface FieldRule {
  /** The field as the caller writes it: `temperature`, `messages[].content[].type: "input_audio"`. */
  field: string;
  /** Per target format (each but the caller's own, which is passed through untranslated). */
  on: Partial<Record<TargetFormat, Handling>>;
  /** A value that asks for nothing (the format's default): never refused, whatever the target. */
  neutral?: { test(value: unknown): boolean; note: string };
  /**
   * For the table's own test: a request of the caller's format that holds this field (or the field's value, for a
   * top-level field, added to the format's smallest request). Refused targets must refuse it naming the field, the
   * others must translate it.
   */
  sample?: { value: unknown } | { body: Record<string, unknown> };
}

/** A rule, written compactly: the field, its handling per target, a sample for the table's test, a neutral value. */
export function rule(
  field: string,
  on: FieldRule['on'],
  sample?: FieldRule['sample'],
  neutral?: FieldRule['neutral'],
): FieldRule {
  return { field, on, ...(sample ? { sample } : {}), ...(neutral ? { neutral } : {}) };
}

export interface FieldTable {
  caller: CallFormat;
  /** The smallest request of this format (what a top-level sample is added to). */
  minimal: Record<string, unknown>;
  rules: readonly FieldRule[];
}

const FORMAT_NAMES: Record<CallFormat, string> = {
  chat: 'chat completions',
  messages: 'messages',
  generate: 'generateContent',
  responses: 'Responses',
};
export const formatName = (f: CallFormat): string => FORMAT_NAMES[f];

/** A table's rules by field name, built once per table. */
const indexes = new WeakMap<FieldTable, Map<string, FieldRule>>();
function index(table: FieldTable): Map<string, FieldRule> {
  let map = indexes.get(table);
  if (!map) {
    map = new Map(table.rules.map((r) => [r.field, r]));
    indexes.set(table, map);
  }
  return map;
}

/**
 * The table, applied to one request on its way to one target: readers ask it about every field and content type they
 * meet, so what the table says is what the code does.
 */
export class Guard {
  private readonly rules: Map<string, FieldRule>;

  constructor(
    readonly table: FieldTable,
    readonly target: TargetFormat,
  ) {
    this.rules = index(table);
  }

  /** Every top-level field of `body`: unknown ones and refused ones throw. */
  top(body: Record<string, unknown>, rename: (key: string) => string = (k) => k): void {
    for (const key in body) {
      if (body[key] === undefined) continue;
      this.check(rename(key), key, body[key]);
    }
  }

  /**
   * One field or content type, by its rule's name; `path` is where it sits in this request, as the caller wrote it
   * (`messages[2].content[0].type`). Returns the handling, so a reader can skip what is dropped.
   */
  check(rule: string, path: string, value: unknown): Handling {
    const found = this.rules.get(rule);
    if (!found) {
      throw new TranslationError(
        path,
        `${path}${describe(value)} is not translated from the ${formatName(this.table.caller)} format to the ` +
          `${formatName(this.target)} format`,
      );
    }
    const handling = found.on[this.target];
    if (!handling) throw new Error(`the translation table has no entry for ${rule} on ${this.target}`);
    if (handling.how !== 'refused') return handling;
    if (found.neutral?.test(value)) return dropped(found.neutral.note);
    throw new TranslationError(
      path,
      `${path}${describe(value)} has no equivalent in the ${formatName(this.target)} format: ${handling.note}`,
    );
  }

  /** Each member of `o` but those in `skip` (read structurally by the caller), by the rule `${base}.${key}`. */
  members(o: Record<string, unknown>, base: string, path: string, skip: readonly string[]): void {
    for (const key in o) {
      if (o[key] === undefined || skip.includes(key)) continue;
      this.check(`${base}.${key}`, at(path, key), o[key]);
    }
  }

  /** Whether this field, present, is left out of the target's request (dropped, or a neutral value). */
  drops(rule: string, path: string, value: unknown): boolean {
    return value === undefined || this.check(rule, path, value).how === 'dropped';
  }
}

/** `: "input_audio"` for a short scalar, nothing for objects (the path already names them). */
function describe(value: unknown): string {
  if (typeof value === 'string' && value.length <= 60) return `: ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `: ${String(value)}`;
  return '';
}

/** The JSON path of an array element / object member, as a caller would write it. */
export const at = (path: string, key: string | number): string =>
  typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
