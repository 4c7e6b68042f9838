import type { Store } from '../../src/store';
import { uniquePrefix } from '../helpers/redis';
import { storeAdapters } from './stores';

const adapters = storeAdapters();

describe.each(adapters.map((a) => [a.name, a] as const))(
  'VendorKeyHealth contract (%s)',
  (_name, adapter) => {
    let stores: Store[] = [];

    afterEach(async () => {
      await Promise.all(stores.map((s) => s.close()));
      stores = [];
      await adapter.cleanup();
    });

    const open = (prefix?: string) => {
      const store = adapter.create(prefix);
      stores.push(store);
      return store.vendorKeyHealth;
    };

    test('a cooldown is listed until it ends; the later of two ends is kept', async () => {
      const health = open();
      const now = Date.now();
      await health.coolDown({ vendor: 'openai', keyId: 'alpha', until: now + 60_000 });
      await health.coolDown({ vendor: 'openai', keyId: 'alpha', until: now + 1_000 });
      await health.coolDown({ vendor: 'anthropic', keyId: 'k-0123456789ab', until: now + 30_000 });
      await health.coolDown({ vendor: 'gemini', keyId: 'short', until: now + 50 });
      const cooling = await health.cooling();
      const byKey = new Map(cooling.map((c) => [`${c.vendor}:${c.keyId}`, c.until]));
      expect(byKey.get('openai:alpha')).toBeGreaterThan(now + 55_000);
      expect(byKey.get('anthropic:k-0123456789ab')).toBeGreaterThan(now + 25_000);
      await new Promise((r) => setTimeout(r, 80));
      expect((await health.cooling()).map((c) => `${c.vendor}:${c.keyId}`).sort()).toEqual([
        'anthropic:k-0123456789ab',
        'openai:alpha',
      ]);
    });

    if (adapter.name !== 'memory') {
      test('replicas on one prefix see each other’s cooldowns', async () => {
        const prefix = uniquePrefix('key-health');
        const a = open(prefix);
        const b = open(prefix);
        await a.coolDown({ vendor: 'openai', keyId: 'alpha@fallback1', until: Date.now() + 10_000 });
        expect((await b.cooling()).map((c) => [c.vendor, c.keyId])).toEqual([['openai', 'alpha@fallback1']]);
      });
    }
  },
);
