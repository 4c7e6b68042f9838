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

/**
 * The hash of the key last presented on one connection. A client sends the same key on every request of a
 * keep-alive connection, so one SHA-256 per connection replaces one per request (OpenSSL's per-call digest fetch
 * makes even a short hash cost about a microsecond). The presented key is compared with the remembered one in
 * constant time: a connection may carry several clients' requests (a proxy in front of Genway).
 */
export class KeyHashMemo {
  private key = '';
  private hash = '';

  hashOf(key: string): string {
    if (!sameSecret(key, this.key)) {
      this.key = key;
      this.hash = hashApiKey(key);
    }
    return this.hash;
  }
}

/**
 * Constant-time equality of two strings of the same length (different lengths are unequal at once: every Genway key
 * has the same length, so that says nothing).
 */
function sameSecret(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** Constant-time equality of two secrets of any length (compares their SHA-256 digests). */
export function secretsEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}
