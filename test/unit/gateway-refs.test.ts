import { refsIn } from '../../src/gateway/vendor';
import { VENDORS } from '../../src/gateway/vendors';

/** Object references in request bodies, as each vendor's `refs` read them (the isolation check's input). */
describe('body references', () => {
  test.each(VENDORS.filter((v) => v.refs).map((v) => [v.name, v.refs!] as const))(
    '%s: every referencing field is found at any depth, its name escaped or not, and nothing else is',
    (_name, refs) => {
      // A value each field's `idOf` reads as an id (a file's URL, a resource name, a bare id).
      const values = ['https://x/v1beta/files/abc', 'cachedContents/c1', 'fileSearchStores/s1', 'file-1'];
      for (const field of refs.fields) {
        const value = values.find((v) => (refs.idOf ? refs.idOf(v) : v));
        const plain = refsIn(JSON.parse(JSON.stringify({ deep: [{ [field]: value }] })), refs);
        // The field's first character as a JSON escape: JSON.parse decodes it, so the walk sees the name.
        const escaped = `{"deep":[{"\\u${field.charCodeAt(0).toString(16).padStart(4, '0')}${field.slice(1)}":${JSON.stringify(value)}}]}`;
        expect([field, plain]).toEqual([field, [refs.idOf ? refs.idOf(value!) : value]]);
        expect([field, refsIn(JSON.parse(escaped), refs)]).toEqual([field, plain]);
      }
      expect(refsIn(JSON.parse('{"model":"m","messages":[{"content":"file_id fileUri"}]}'), refs)).toEqual(
        [],
      );
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
