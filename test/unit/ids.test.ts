import { uuidV7 } from '../../src/ids';

describe('request ids', () => {
  const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

  test('a UUID of version 7 (RFC 9562): its first 48 bits are the time in ms, then the version and the variant', () => {
    const now = Date.UTC(2026, 10, 28, 5, 40, 12, 345);
    const id = uuidV7(now);
    expect(id).toMatch(V7);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(now);
    // The largest time a version 7 id holds (the year 10889) still fits.
    expect(uuidV7(2 ** 48 - 1).slice(0, 13)).toBe('ffffffff-ffff');
    expect(uuidV7(0).slice(0, 13)).toBe('00000000-0000');
  });

  test('ids of later ms sort after earlier ones, and none repeats', () => {
    const start = Date.UTC(2026, 10, 28);
    const ids = Array.from({ length: 5000 }, (_, i) => uuidV7(start + Math.floor(i / 10)));
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 10; i < ids.length; i += 10) expect(ids[i - 1] < ids[i]).toBe(true);
    for (const id of ids) expect(id).toMatch(V7);
  });

  test('each id has 74 random bits of its own: the bits after the time differ between ids of one ms', () => {
    const ids = Array.from({ length: 200 }, () => uuidV7(1_000_000));
    const tails = new Set(ids.map((id) => id.slice(14)));
    expect(tails.size).toBe(200);
  });
});
