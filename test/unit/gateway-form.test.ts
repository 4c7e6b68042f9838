import { formValues, nameMentions } from '../../src/gateway/form';

const CT = 'multipart/form-data; boundary=B';
const form = (...parts: string[]) => Buffer.from(`${parts.map((p) => `--B\r\n${p}\r\n`).join('')}--B--\r\n`);
const field = (disposition: string, value: string) => `Content-Disposition: ${disposition}\r\n\r\n${value}`;

describe('formValues: a form field as vendors parse it', () => {
  test.each([
    ['one quoted field', form(field('form-data; name="model"', 'm1')), ['m1']],
    ['an unquoted name', form(field('form-data; name=model', 'm1')), ['m1']],
    ['the name after another parameter', form(field('form-data; x="y"; name="model"', 'm1')), ['m1']],
    [
      'two fields, in order',
      form(field('form-data; name="model"', 'a'), field('form-data; name="model"', 'b')),
      ['a', 'b'],
    ],
    ['a file part of that name', form(field('form-data; name="model"; filename="m.txt"', 'm1')), [null]],
    [
      'a delimiter inside a value is content',
      form(field('form-data; name="model"', 'a--B\r\nx')),
      ['a--B\r\nx'],
    ],
    ['other fields only', form(field('form-data; name="file"', 'x')), []],
    [
      'a form cut short',
      Buffer.from('--B\r\nContent-Disposition: form-data; name="model"\r\n\r\nm1'),
      undefined,
    ],
  ] as const)('%s', async (_label, body, expected) => {
    expect((await formValues(body, CT, ['model']))?.get('model')).toEqual(expected);
  });

  test('several fields in one reading, each with its own values; a name not asked for is left out', async () => {
    const body = form(
      field('form-data; name="model"', 'm1'),
      field('form-data; name="response_format"', 'json'),
      field('form-data; name="file"; filename="a.wav"', 'x'),
      field('form-data; name="response_format"', 'text'),
    );
    expect(await formValues(body, CT, ['model', 'response_format', 'stream'])).toEqual(
      new Map([
        ['model', ['m1']],
        ['response_format', ['json', 'text']],
        ['stream', []],
      ]),
    );
  });

  test('a body that is not a form, or a form without a boundary, has no values', async () => {
    expect(await formValues(Buffer.from('{"model":"m"}'), 'application/json', ['model'])).toBeUndefined();
    expect(
      await formValues(form(field('form-data; name="model"', 'm')), 'multipart/form-data', ['model']),
    ).toBeUndefined();
    expect(await formValues(Buffer.alloc(0), undefined, ['model'])).toBeUndefined();
  });
});

describe('nameMentions: every Content-Disposition line some parser reads as the name', () => {
  test.each([
    ['a quoted name', form(field('form-data; name="model"', 'm')), 1],
    ['an unquoted one, in other case', form(field('FORM-DATA; NAME=model', 'm')), 1],
    ['RFC 2231 (Go decodes it; busboy does not)', form(field("form-data; name*=utf-8''mod%65l", 'm')), 1],
    [
      'a second name parameter (Python keeps the last)',
      form(field('form-data; name="x"; name="model"', 'm')),
      1,
    ],
    [
      'a part hidden in a file',
      form(field('form-data; name="file"', 'a--B\r\nContent-Disposition: form-data; name="model"\r\n\r\nm')),
      1,
    ],
    ['other names', form(field('form-data; name="models"', 'm'), field('form-data; name="file"', 'm')), 0],
  ] as const)('%s', (_label, body, expected) => {
    expect(nameMentions(body, ['model']).get('model')).toBe(expected);
  });

  test('several names counted in one pass, each line once per name it spells', () => {
    const body = form(
      field('form-data; name="model"; name="model"', 'm'),
      field('form-data; name="x"; name*=utf-8\'\'response%5fformat', 'text'),
      field('form-data; name="response_format"', 'json'),
    );
    expect(nameMentions(body, ['model', 'response_format', 'stream'])).toEqual(
      new Map([
        ['model', 1],
        ['response_format', 2],
        ['stream', 0],
      ]),
    );
  });
});
