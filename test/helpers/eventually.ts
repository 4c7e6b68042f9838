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
