import { isDeepStrictEqual } from 'node:util';

/**
 * Reads `read()` until it deep-equals `expected` or `timeoutMs` passes, and returns the last value read, for an
 * ordinary `expect(...).toEqual(expected)`: for effects that land just after a response (usage, charges).
 */
export async function settled<T>(read: () => Promise<T> | T, expected: T, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (isDeepStrictEqual(value, expected) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Runs `check` (which throws, e.g. a failing expect) until it passes or `timeoutMs` passes, then throws its last
 * error: for properties that hold once some background work has run (a replica's refresh, a write off the path).
 */
export async function eventually(check: () => unknown, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
