import busboy from 'busboy';

/** Longer than any model name: a longer value is kept to this length (and matches no allow-list or price). */
const FIELD_BYTES = 64 << 10;

/**
 * Every value a multipart/form-data body gives each of the fields `names`, as a vendor's multipart parser reads it
 * (busboy: a delimiter only at a line start, Content-Disposition parameters in any order, quoted or not, RFC 5987
 * names); a file part of that name counts as a value that is no text (null). Undefined when the body is not a form
 * busboy can read. A vendor reading a repeated field takes the first (Go's FormValue) or the last (Python's
 * frameworks), so the caller treats more than one value as ambiguous.
 */
export function formValues(
  body: Buffer,
  contentType: string | undefined,
  names: readonly string[],
): Promise<Map<string, (string | null)[]> | undefined> {
  return new Promise((resolve) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, limits: { fieldSize: FIELD_BYTES } });
    } catch {
      return resolve(undefined); // not multipart, or no boundary
    }
    const values = new Map(names.map((name) => [name, [] as (string | null)[]]));
    parser.on('field', (field, value) => values.get(field)?.push(value));
    parser.on('file', (field, stream) => {
      values.get(field)?.push(null);
      stream.resume();
    });
    parser.on('error', () => resolve(undefined));
    parser.on('close', () => resolve(values));
    parser.end(body);
  });
}

const DISPOSITION = /content-disposition[ \t]*:([^\r\n]*)/gi;
const NAME_PARAM = /^\s*name(\*?)\s*=\s*(.*?)\s*$/i;

/**
 * For each of `names`, how many Content-Disposition lines anywhere in the body give a name parameter that some parser
 * reads as it: quoted or not, `name*=utf-8''...` (RFC 2231, which Go decodes and busboy ignores), or a second name
 * parameter on the line (Python's parsers keep the last, busboy the first). More than formValues found means a part
 * that parsers read differently, or a form hidden in another part's content. One pass over the body for all names.
 */
export function nameMentions(body: Buffer, names: readonly string[]): Map<string, number> {
  const counts = new Map(names.map((name) => [name, 0]));
  const text = body.toString('latin1');
  for (const line of text.matchAll(DISPOSITION)) {
    // Each name the line's parameters spell counts once for the line.
    const named = new Set<string>();
    for (const param of line[1].split(';')) {
      const found = NAME_PARAM.exec(param);
      if (!found) continue;
      let value = found[2].replace(/^"(.*)"$/, '$1');
      if (found[1]) {
        value = value.slice(value.lastIndexOf("'") + 1);
        try {
          value = decodeURIComponent(value);
        } catch {
          continue;
        }
      }
      if (counts.has(value)) named.add(value);
    }
    for (const name of named) counts.set(name, counts.get(name)! + 1);
  }
  return counts;
}
