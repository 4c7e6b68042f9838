import type { ObjectOwner, VendorObjectStore } from '../../gateway/objects';

export class MemoryVendorObjectStore implements VendorObjectStore {
  private readonly objects = new Map<string, { owner: ObjectOwner; until: number }>();
  private writes = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async remember(vendor: string, objects: { id: string; owner: ObjectOwner }[], ttlMs: number) {
    const until = this.now() + ttlMs;
    for (const { id, owner } of objects)
      this.objects.set(`${vendor}\u0000${id}`, { owner: { ...owner }, until });
    if (++this.writes % 1000 === 0) this.sweep();
  }

  async recall(vendor: string, ids: readonly string[]): Promise<(ObjectOwner | null)[]> {
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
