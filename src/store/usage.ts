import type { RedisClient } from './redis/connection';
import type { RedisKeys } from './keys';
import { LuaScript } from './redis/scripts';
import type { ModelUsage, UsageStore } from './types';

const FIELDS = ['requests', 'input', 'output', 'cacheRead', 'cacheWrite', 'reasoning'] as const;
type Field = (typeof FIELDS)[number];
// A model name never holds NUL, so it separates model and field unambiguously.
const SEP = '\u0000';

/** A usage record with every count at zero. */
export function emptyUsage(): ModelUsage {
  return { requests: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
}

export class MemoryUsageStore implements UsageStore {
  private readonly byKey = new Map<string, Map<string, ModelUsage>>();

  async add(keyId: string, model: string, more: ModelUsage): Promise<void> {
    let models = this.byKey.get(keyId);
    if (!models) this.byKey.set(keyId, (models = new Map()));
    let totals = models.get(model);
    if (!totals) models.set(model, (totals = emptyUsage()));
    for (const field of FIELDS) totals[field] += more[field];
  }

  async get(keyId: string): Promise<Record<string, ModelUsage>> {
    return Object.fromEntries([...(this.byKey.get(keyId) ?? [])].map(([m, u]) => [m, { ...u }]));
  }
}

const hashIncrMany = new LuaScript('hash_incr_many');

/** One hash per key; every (model, field) increment of a call in one script, so concurrent replicas add up exactly. */
export class RedisUsageStore implements UsageStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async add(keyId: string, model: string, more: ModelUsage): Promise<void> {
    const args: (string | number)[] = [];
    for (const field of FIELDS) if (more[field]) args.push(`${model}${SEP}${field}`, more[field]);
    await hashIncrMany.run(this.redis, [this.keys.keyUsage(keyId)], args);
  }

  async get(keyId: string): Promise<Record<string, ModelUsage>> {
    const raw = await this.redis.hgetall(this.keys.keyUsage(keyId));
    const out: Record<string, ModelUsage> = {};
    for (const [name, value] of Object.entries(raw)) {
      const cut = name.lastIndexOf(SEP);
      const model = name.slice(0, cut);
      const field = name.slice(cut + 1) as Field;
      if (!FIELDS.includes(field)) continue;
      (out[model] ??= emptyUsage())[field] = Number(value);
    }
    return out;
  }
}
