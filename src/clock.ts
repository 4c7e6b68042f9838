/** Wall-clock time in epoch milliseconds, injectable so tests can move time (e.g. result-URL expiry). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Whether `work` settled within `graceMs` (Infinity: waits for it). */
export async function withinGrace(work: Promise<unknown>, graceMs: number): Promise<boolean> {
  if (graceMs === Infinity) {
    await work;
    return true;
  }
  let timer: NodeJS.Timeout | undefined;
  const over = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), graceMs)));
  try {
    return await Promise.race([work.then(() => true as const), over]);
  } finally {
    clearTimeout(timer);
  }
}
