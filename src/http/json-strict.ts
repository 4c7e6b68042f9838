/**
 * What `JSON.parse` accepts but Genway will not act on, found by one pass over the raw text of a body that already
 * parsed:
 * - nesting deeper than `maxDepth` (recursive code further on would overflow its stack);
 * - a key that appears twice in one object, however it is spelled (`"duration"` and `"dur\u0061tion"`):
 *   `JSON.parse` keeps the last, a reader of the text may see the first, so what is checked and what is used differ;
 * - a string or key holding a lone UTF-16 surrogate (`"\ud800"`): neither UTF-8, Redis nor a vendor can hold it.
 * It also keeps the literal text of every number written as a decimal or exponent that `JSON.parse` turned into an
 * integer (`-1.0`, `1e1`), by path, so a rule about integers can see exactly the value that will be used.
 *
 * The pass is iterative (no recursion), linear, and decodes only strings that hold an escape.
 */

export type JsonPath = (string | number)[];

export interface JsonProblem {
  path: JsonPath;
  rule: string;
}

export interface JsonScan {
  problem?: JsonProblem;
  /** `JSON.stringify(path)` -> literal text, for integral numbers written with a fraction or an exponent. */
  integralDecimals: Map<string, string>;
}

interface Frame {
  object: boolean;
  /** Keys seen so far (objects). */
  keys: Set<string> | null;
  /** The current key (objects) or index (arrays). */
  at: string | number;
  /** Objects: the next string is a key. */
  expectKey: boolean;
}

const DIGITS_AND_SIGNS = /[-+0-9.eE]/;

function pathOf(stack: Frame[]): JsonPath {
  return stack.map((f) => f.at);
}

/** A JSON string literal's value, decoded only when it holds an escape. */
function stringValue(text: string, start: number, end: number, escaped: boolean): string {
  return escaped ? (JSON.parse(text.slice(start, end + 1)) as string) : text.slice(start + 1, end);
}

export function scanJson(text: string, maxDepth: number): JsonScan {
  const stack: Frame[] = [];
  const integralDecimals = new Map<string, string>();
  const fail = (rule: string, path = pathOf(stack)): JsonScan => ({
    problem: { path, rule },
    integralDecimals,
  });
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    switch (c) {
      case 123: // {
      case 91: // [
        if (stack.length >= maxDepth) return fail(`nesting deeper than ${maxDepth} levels`);
        stack.push({
          object: c === 123,
          keys: c === 123 ? new Set() : null,
          at: c === 123 ? '' : 0,
          expectKey: true,
        });
        break;
      case 125: // }
      case 93: // ]
        stack.pop();
        break;
      case 44: // ,
        if (top?.object) top.expectKey = true;
        else if (top) top.at = (top.at as number) + 1;
        break;
      case 58: // :
        if (top) top.expectKey = false;
        break;
      case 34: {
        // "
        let j = i + 1;
        let escaped = false;
        let unicode = false;
        for (; j < n; j++) {
          const d = text.charCodeAt(j);
          if (d === 92 /* \ */) {
            escaped = true;
            if (text.charCodeAt(j + 1) === 117 /* u */) unicode = true;
            j++;
          } else if (d === 34) break;
        }
        const isKey = top?.object === true && top.expectKey;
        if (isKey || unicode) {
          const value = stringValue(text, i, j, escaped);
          if (unicode && !value.isWellFormed()) {
            const path = pathOf(stack);
            if (isKey) path[path.length - 1] = value;
            return fail('must not hold a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape)', path);
          }
          if (isKey) {
            if (top.keys!.has(value)) {
              top.at = value;
              return fail(`duplicate key "${value}" in one object`);
            }
            top.keys!.add(value);
            top.at = value;
          }
        }
        i = j;
        break;
      }
      default:
        if (c === 45 || (c >= 48 && c <= 57)) {
          let j = i + 1;
          while (j < n && DIGITS_AND_SIGNS.test(text[j])) j++;
          const literal = text.slice(i, j);
          if (/[.eE]/.test(literal) && Number.isInteger(Number(literal))) {
            integralDecimals.set(JSON.stringify(pathOf(stack)), literal);
          }
          i = j - 1;
        }
    }
  }
  return { integralDecimals };
}

/** `body.items.3.input.prompt` */
export function describePath(root: string, path: JsonPath): string {
  return [root, ...path.map(String)].join('.');
}
