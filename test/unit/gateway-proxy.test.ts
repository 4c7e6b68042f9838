import { HeaderNameSet, millis } from '../../src/gateway/proxy';

describe('millis (X-Genway-Overhead-Ms)', () => {
  test('writes what toFixed(3) writes for times from nothing to minutes', () => {
    const values = [
      0, 0.0004, 0.0006, 0.001, 0.01, 0.0999, 0.1, 0.123456, 0.9996, 1, 1.5, 9.9994, 12.3456, 60_000.25,
    ];
    // And a spread of measured-looking values: sums of performance.now() differences.
    for (let i = 1; i < 2000; i++) values.push((i * 7919) / 104729 + i / 3);
    for (const v of values) expect([v, millis(v)]).toEqual([v, v.toFixed(3)]);
  });
});

describe('HeaderNameSet', () => {
  const names = ['te', 'via', 'x-api-key', 'connection', 'keep-alive', 'authorization', 'te'];
  const set = new HeaderNameSet(names);

  test('holds exactly its names: not others of the same length, a prefix, another case or the empty name', () => {
    for (const name of names) expect(set.has(name)).toBe(true);
    // Built at run time, as the HTTP parser's names are (not the same string objects as the set's).
    expect(set.has(['x-api', '-key'].join(''))).toBe(true);
    for (const other of [
      'tx',
      'vib',
      'x-api-kez',
      'connectioN',
      'Connection',
      'x-api-ke',
      'authorizations',
      '',
      'accept',
    ])
      expect([other, set.has(other)]).toEqual([other, false]);
  });
});
