/** Wall-clock time in epoch milliseconds, injectable so tests can move time (e.g. result-URL expiry). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
