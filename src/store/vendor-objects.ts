import type { Redis } from 'ioredis';
import type { ObjectOwner, VendorObjectStore } from '../gateway/objects';
import type { VendorName } from '../gateway/vendor';
import type { RedisKeys } from './keys';

export class MemoryVendorObjectStore implements VendorObjectStore {
  private readonly objects = new Map<string, { owner: ObjectOwner; until: number }>();
  private writes = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async remember(vendor: VendorName, objects: { id: string; owner: ObjectOwner }[], ttlMs: number) {
    const until = this.now() + ttlMs;
    for (const { id, owner } of objects)
      this.objects.set(`${vendor}\u0000${id}`, { owner: { ...owner }, until });
    if (++this.writes % 1000 === 0) this.sweep();
  }

  async recall(vendor: VendorName, ids: readonly string[]): Promise<(ObjectOwner | null)[]> {
    const now = this.now();
    return ids.map((id) => {
      const hit = this.objects.get(`${vendor}\u0000${id}`);
      return hit && hit.until > now ? { ...hit.owner } : null;
    });
  }

  private sweep(): void {
    const now = this.now();
    for (const [k, v] of this.objects) if (v.until <= now) this.objects.delete(k);
  }
}

/** One string per object (`vendorObject`), expiring with its record: one round trip per write and per lookup. */
export class RedisVendorObjectStore implements VendorObjectStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async remember(vendor: VendorName, objects: { id: string; owner: ObjectOwner }[], ttlMs: number) {
    if (objects.length === 0) return;
    const multi = this.redis.multi();
    for (const { id, owner } of objects) {
      multi.set(this.keys.vendorObject(vendor, id), JSON.stringify(owner), 'PX', ttlMs);
    }
    await multi.exec();
  }

  async recall(vendor: VendorName, ids: readonly string[]): Promise<(ObjectOwner | null)[]> {
    if (ids.length === 0) return [];
    const values = await this.redis.mget(ids.map((id) => this.keys.vendorObject(vendor, id)));
    return values.map((v) => (v ? (JSON.parse(v) as ObjectOwner) : null));
  }
}
