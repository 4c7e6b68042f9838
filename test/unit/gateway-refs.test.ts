import { mayReference, refsIn } from '../../src/gateway/vendor';
import { VENDORS } from '../../src/gateway/vendors';

/** Object references in request bodies, as each vendor's `refs` read them (the isolation check's input). */
describe('body references', () => {
  test.each(VENDORS.filter((v) => v.refs).map((v) => [v.name, v.refs!] as const))(
    '%s: every referencing field is found by the raw-text search, so no field is left unwalked',
    (_name, refs) => {
      for (const field of refs.fields) {
        const text = JSON.stringify({ deep: [{ [field]: 'x' }] });
        expect([field, mayReference(text, refs)]).toEqual([field, true]);
      }
      expect(mayReference('{"model":"m","messages":[{"content":"hi"}]}', refs)).toBe(false);
      // An escape could spell any name: the body is walked.
      expect(mayReference('{"m\\u006fdel":"m"}', refs)).toBe(true);
    },
  );

  test('values are read decoded, at any depth, as strings, arrays of strings and objects with an id', () => {
    const openai = VENDORS.find((v) => v.name === 'openai')!.refs!;
    const body = JSON.parse(
      '{"previous\\u005fresponse_id":"resp_\\u0041","conversation":{"id":"conv_1"},' +
        '"tools":[{"container":{"file_ids":["file-1","file-2"]}}],"input":[{"file_id":"file-3"}],"note":"file_id"}',
    ) as unknown;
    expect(refsIn(body, openai).sort()).toEqual(['conv_1', 'file-1', 'file-2', 'file-3', 'resp_A']);
    const gemini = VENDORS.find((v) => v.name === 'gemini')!.refs!;
    const generate = {
      contents: [{ parts: [{ fileData: { fileUri: 'https://x/v1beta/files/abc' } }] }],
      tools: [{ fileSearch: { fileSearchStoreNames: ['fileSearchStores/s1'] } }],
      cachedContent: 'cachedContents/c1',
      fileName: 'not-a-resource',
    };
    expect(refsIn(generate, gemini).sort()).toEqual([
      'cachedContents/c1',
      'fileSearchStores/s1',
      'files/abc',
    ]);
  });
});
