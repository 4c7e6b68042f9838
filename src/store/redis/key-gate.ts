import type { Redis } from 'ioredis';
import type { RateLimit } from '../../config';
import type { RedisKeys } from '../keys';
import type { KeyGate, KeyGateResult } from '../types';
import { LuaScript } from './scripts';

const keyGate = new LuaScript('key_gate');

/** key_gate.lua: existence, revocation and the token bucket in one script. */
export class RedisKeyGate implements KeyGate {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async pass(hash: string, bucketId: string, limit: RateLimit, cost = 1): Promise<KeyGateResult> {
    const reply = (await keyGate.run(
      this.redis,
      [this.keys.keyByHash(hash), this.keys.rateLimit(bucketId)],
      [limit.ratePerSec, limit.burst, cost],
    )) as number[];
    if (reply[0] === -1) return 'unknown';
    if (reply[0] === -2) return 'revoked';
    return { allowed: reply[0] === 1, retryAfterMs: reply[1], remaining: reply[2] };
  }
}
