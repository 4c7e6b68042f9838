import { dayOf, monthOf } from '../../src/accounts/usage';

describe('UTC day and month of a posting (cached per day)', () => {
  test.each([
    [0, '1970-01-01'],
    [86_399_999, '1970-01-01'],
    [86_400_000, '1970-01-02'],
    [Date.UTC(2026, 0, 31, 23, 59, 59, 999), '2026-01-31'],
    [Date.UTC(2026, 1, 1), '2026-02-01'],
    [Date.UTC(2024, 1, 29, 12), '2024-02-29'],
    [-1, '1969-12-31'],
    [-86_400_001, '1969-12-30'],
    [1_800_000_000_000, '2027-01-15'],
  ])('%d is %s, asked twice and after its neighbours', (at, day) => {
    for (const t of [at, at - 1, at + 1, at]) {
      expect(dayOf(t)).toBe(new Date(t).toISOString().slice(0, 10));
      expect(monthOf(t)).toBe(new Date(t).toISOString().slice(0, 7));
    }
    expect(dayOf(at)).toBe(day);
    expect(monthOf(at)).toBe(day.slice(0, 7));
  });
});
