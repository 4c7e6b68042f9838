import { emptyUsage, USAGE_FIELDS, type ModelUsage, type UsageStore } from '../../gateway/store';
import type { RedisKeys } from '../keys';
import type { RedisClient } from './connection';
import { LuaScript } from './scripts';

type Field = (typeof USAGE_FIELDS)[number];
// A model name never holds NUL, so it separates model and field unambiguously.
const SEP = '\u0000';

const hashIncrMany = new LuaScript('hash_incr_many');

/** One hash per key; every (model, field) increment of a call in one script, so concurrent replicas add up exactly. */
export class RedisUsageStore implements UsageStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async add(keyId: string, model: string, more: ModelUsage): Promise<void> {
    const args: (string | number)[] = [];
    for (const field of USAGE_FIELDS) if (more[field]) args.push(`${model}${SEP}${field}`, more[field]);
    await hashIncrMany.run(this.redis, [this.keys.keyUsage(keyId)], args);
  }

  async get(keyId: string): Promise<Record<string, ModelUsage>> {
    const raw = await this.redis.hgetall(this.keys.keyUsage(keyId));
    const out: Record<string, ModelUsage> = {};
    for (const [name, value] of Object.entries(raw)) {
      const cut = name.lastIndexOf(SEP);
      const model = name.slice(0, cut);
      const field = name.slice(cut + 1) as Field;
      if (!USAGE_FIELDS.includes(field)) continue;
      (out[model] ??= emptyUsage())[field] = Number(value);
    }
    return out;
  }
}
