/** Money is integer micro-USD inside Genway; the API shows USD numbers. */
export const MICROS_PER_USD = 1_000_000;

/** USD amount to micro-USD, rounded half up to the micro. */
export function usdToMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD + Number.EPSILON);
}

export function microsToUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}
