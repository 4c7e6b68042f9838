import type { ObjectOwner, VendorObjectStore } from '../../gateway/objects';
import type { RedisKeys } from '../keys';
import type { RedisClient } from './connection';

/**
 * One string per object (`vendorObject`), expiring with its record. Each key is written and read on its own (in
 * parallel, so still one round trip): the objects of one call can sit on different slots of a Redis Cluster, where a
 * transaction or MGET across them is refused.
 */
export class RedisVendorObjectStore implements VendorObjectStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  async remember(vendor: string, objects: { id: string; owner: ObjectOwner }[], ttlMs: number) {
    await Promise.all(
      objects.map(({ id, owner }) =>
        this.redis.set(this.keys.vendorObject(vendor, id), JSON.stringify(owner), 'PX', ttlMs),
      ),
    );
  }

  async recall(vendor: string, ids: readonly string[]): Promise<(ObjectOwner | null)[]> {
    const values = await Promise.all(ids.map((id) => this.redis.get(this.keys.vendorObject(vendor, id))));
    return values.map((v) => (v ? (JSON.parse(v) as ObjectOwner) : null));
  }
}
