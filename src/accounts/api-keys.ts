import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Genway keys are recognisable (`gwk_`) so secret scanners and humans can tell them apart from vendor keys. */
export const KEY_PREFIX = 'gwk_';
const KEY_PATTERN = /^gwk_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): { key: string; hash: string } {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function isWellFormedKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/** Constant-time equality of two secrets of any length (compares their SHA-256 digests). */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}
