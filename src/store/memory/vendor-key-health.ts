import type { KeyCooldown, VendorKeyHealth } from '../../gateway/key-health';

/** Embedded mode: one process, so the cooldowns are a map (kept to the latest end per key). */
export class MemoryVendorKeyHealth implements VendorKeyHealth {
  private readonly untils = new Map<string, KeyCooldown>();

  constructor(private readonly now: () => number = Date.now) {}

  async coolDown(cooldown: KeyCooldown): Promise<void> {
    const field = `${cooldown.vendor}:${cooldown.keyId}`;
    const held = this.untils.get(field);
    if (!held || held.until < cooldown.until) this.untils.set(field, { ...cooldown });
  }

  async cooling(): Promise<KeyCooldown[]> {
    const now = this.now();
    const out: KeyCooldown[] = [];
    for (const [field, c] of this.untils) {
      if (c.until > now) out.push({ ...c });
      else this.untils.delete(field);
    }
    return out;
  }
}
