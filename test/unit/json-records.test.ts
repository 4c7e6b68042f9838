import { JsonRecords, type JsonPath } from '../../src/gateway/json-records';

/** Every record `text` yields, fed in pieces of `size` bytes (1 = byte by byte), with the index of its path. */
function records(
  spec: { at: readonly JsonPath[]; keep: readonly JsonPath[] },
  text: string | Buffer,
  size?: number,
  flush = false,
): [number, unknown][] {
  const found: [number, unknown][] = [];
  const reader = new JsonRecords(spec, (record, at) => found.push([at, record]));
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const step = size ?? bytes.length;
  for (let i = 0; i < bytes.length; i += step) reader.feed(bytes.subarray(i, i + step));
  if (flush) reader.flush();
  return found;
}

/** The same records whatever the pieces: byte by byte, in every two-piece split, and whole. */
function everySplit(spec: { at: readonly JsonPath[]; keep: readonly JsonPath[] }, text: string) {
  const whole = records(spec, text);
  expect(records(spec, text, 1)).toEqual(whole);
  const bytes = Buffer.from(text);
  for (let cut = 1; cut < bytes.length; cut++) {
    const found: [number, unknown][] = [];
    const reader = new JsonRecords(spec, (record, at) => found.push([at, record]));
    reader.feed(bytes.subarray(0, cut));
    reader.feed(bytes.subarray(cut));
    expect(found).toEqual(whole);
  }
  return whole;
}

describe('JsonRecords: chosen values out of a stream of JSON, in passing', () => {
  const lines = { at: [[]], keep: [['response', 'usage'], ['response', 'model'], ['type']] };

  test('JSON lines: each top-level object is a record holding only its kept values', () => {
    const text = [
      {
        type: 'a',
        response: { model: 'm1', usage: { in: 1, out: [2, 3] }, other: { usage: 9 } },
        extra: 'x',
      },
      { response: { text: 'no usage here' } },
      { type: 'c', response: { usage: null, model: 'm3' } },
    ]
      .map((l) => `${JSON.stringify(l)}\n`)
      .join('');
    expect(everySplit(lines, text)).toEqual([
      [0, { type: 'a', response: { model: 'm1', usage: { in: 1, out: [2, 3] } } }],
      [0, {}],
      [0, { type: 'c', response: { usage: null, model: 'm3' } }],
    ]);
  });

  test('strings: escaped quotes and backslashes (also split across pieces), braces and keys inside them', () => {
    const text =
      '{"type":"a\\\\","pad":"\\"}{[\\\\\\"response\\":","response":{"x":"\\\\\\"","model":"m\\"1","usage":{"k":"}"}}}\n';
    expect(JSON.parse(text)).toBeDefined();
    expect(everySplit(lines, text)).toEqual([
      [0, { type: 'a\\', response: { model: 'm"1', usage: { k: '}' } } }],
    ]);
  });

  test('keys match decoded (an escape in a key hides nothing); values in whitespace-laid JSON', () => {
    const text = '{ "resp\\u006fnse" : { "usage" :\n { "n" : 1 } , "model" : "m" } , "type" : 7 }';
    expect(everySplit(lines, text)).toEqual([[0, { response: { usage: { n: 1 }, model: 'm' }, type: 7 }]]);
  });

  test('records in arrays deep in a document, from several paths, told apart by path', () => {
    const spec = {
      at: [
        ['response', 'items', '*'],
        ['metadata', 'output', 'items', '*'],
      ],
      keep: [['usage'], ['model']],
    };
    const items = [{ usage: 1, model: 'a', big: [1, [2, { usage: 5 }]] }, 'not an object', { usage: 2 }];
    const text = JSON.stringify({
      name: 'x',
      metadata: { output: { items }, items: [{ usage: 99 }] },
      response: { items: [], also: { items: [{ usage: 98 }] } },
      items: [{ usage: 97 }],
    });
    expect(everySplit(spec, text)).toEqual([
      [1, { usage: 1, model: 'a' }],
      [1, { usage: 2 }],
    ]);
  });

  test('a kept value longer than 16 KiB is dropped; the rest of its record is kept', () => {
    const text = JSON.stringify({ type: 'x'.repeat(20 << 10), response: { model: 'm' } });
    expect(records(lines, text, 1000)).toEqual([[0, { response: { model: 'm' } }]]);
  });

  test('megabytes of content are skipped, whatever the piece size, with no value held', () => {
    const content = `${'ab\\"c\\\\'.repeat(300_000)}`;
    const text = `{"type":"t","pad":"${content}","list":[${'[1,{"a":"}"}],'.repeat(50_000)}0],"response":{"usage":3}}\n`;
    for (const size of [4096, 65536, text.length]) {
      expect(records(lines, text, size)).toEqual([[0, { type: 't', response: { usage: 3 } }]]);
    }
  });

  test('malformed bytes yield fewer records, never an error; reset starts the next value over', () => {
    const garbage = Buffer.from([0, 255, 34, 123, 93, 125, 58, 44, 92, 34, 91, 10, 123, 123, 34]);
    expect(() => records(lines, garbage, 1)).not.toThrow();
    // Random runs of JSON's own punctuation, fed in random pieces: every one ends, none throws.
    const alphabet = Buffer.from('{}[]":,\\ a1\nut');
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let run = 0; run < 300; run++) {
      const bytes = Buffer.from(Array.from({ length: 300 }, () => alphabet[random(alphabet.length)]));
      expect(() => records(lines, bytes, 1 + random(40))).not.toThrow();
    }
    const found: unknown[] = [];
    const reader = new JsonRecords(lines, (record) => found.push(record));
    reader.feed(Buffer.from('{"type":"cut","response":{"usage":{"a":"'));
    reader.reset();
    reader.feed(Buffer.from('{"type":"next"}\n'));
    expect(found).toEqual([{ type: 'next' }]);
  });

  test('flush hands over a record cut short, with the values that were whole', () => {
    expect(
      records(lines, '{"type":"t","response":{"usage":{"n":1},"model":"unfinished', undefined, true),
    ).toEqual([[0, { type: 't', response: { usage: { n: 1 } } }]]);
  });
});
