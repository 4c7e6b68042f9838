import fc from 'fast-check';
import { editJson } from '../../src/gateway/json-edit';

describe('editJson: top-level members changed, every other byte as sent', () => {
  test.each<[string, string, Parameters<typeof editJson>[1], string]>([
    [
      'a value replaced in place',
      '{ "model" : "a",\n  "n":1.50 }',
      { set: { model: 'b' } },
      '{ "model" : "b",\n  "n":1.50 }',
    ],
    ['a member added first', '{"n":1}', { set: { model: 'b' } }, '{"model":"b","n":1}'],
    ['into an empty object', '{ }', { set: { a: [1] } }, '{"a":[1] }'],
    ['the first removed', '{"model":"a", "n":1}', { remove: ['model'] }, '{"n":1}'],
    ['a middle one removed', '{"a":1,"model":{"x":"}"},"b":2}', { remove: ['model'] }, '{"a":1,"b":2}'],
    ['the last removed', '{"a":1 , "model":"x" }', { remove: ['model'] }, '{"a":1 }'],
    ['the only one removed', '{"model":"x"}', { remove: ['model'] }, '{}'],
    ['all removed', '{"a":1,"b":2}', { remove: ['a', 'b'] }, '{}'],
    [
      'every repeat replaced',
      '{"model":"a","model":"b"}',
      { set: { model: 'c' } },
      '{"model":"c","model":"c"}',
    ],
    [
      'an escaped key found',
      '{"mo\\u0064el":"a","x":"\\u00e9"}',
      { set: { model: 'b' } },
      '{"mo\\u0064el":"b","x":"\\u00e9"}',
    ],
    [
      'nested keys untouched',
      '{"m":{"model":"a"},"model":"a"}',
      { set: { model: 'b' } },
      '{"m":{"model":"a"},"model":"b"}',
    ],
    [
      'removed and added at once',
      '{"model":"a","stream":true,"n":1}',
      { set: { anthropic_version: 'v' }, remove: ['model', 'stream'] },
      '{"anthropic_version":"v","n":1}',
    ],
  ])('%s', (_name, text, edits, out) => {
    expect(editJson(text, edits)).toBe(out);
  });

  test('for any object: the edits hold, and nothing else changes', () => {
    const key = fc.string({ maxLength: 6 }).filter((k) => k !== 'model' && k !== '__proto__');
    fc.assert(
      fc.property(
        fc.dictionary(key, fc.jsonValue(), { maxKeys: 6 }),
        fc.boolean(),
        fc.string(),
        (obj, hasModel, model) => {
          const text = JSON.stringify(hasModel ? { model: 'old', ...obj } : obj, null, 1);
          // What the text says, not the generated value: JSON has no -0 and no undefined.
          const input = JSON.parse(text) as Record<string, unknown>;
          const set = JSON.parse(editJson(text, { set: { model } })) as Record<string, unknown>;
          expect(set).toEqual({ ...input, model });
          const removed = JSON.parse(editJson(text, { remove: ['model'] })) as Record<string, unknown>;
          const { model: _gone, ...rest } = input;
          expect(removed).toEqual(rest);
          // Every member but the model keeps its exact text.
          for (const k of Object.keys(obj))
            expect(editJson(text, { set: { model } })).toContain(
              JSON.stringify(obj[k], null, 1).split('\n')[0],
            );
        },
      ),
    );
  });
});
