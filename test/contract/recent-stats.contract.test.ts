import type { Store } from '../../src/store';
import { uniquePrefix } from '../helpers/redis';
import { storeAdapters } from './stores';

const adapters = storeAdapters();
const SLOTS = 16;
const buckets = (at: number, n: number) => Array.from({ length: SLOTS }, (_, i) => (i === at ? n : 0));

describe.each(adapters.map((a) => [a.name, a] as const))(
  'RecentStatsStore contract (%s)',
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
      return store.recentStats;
    };

    test('the folds of two replicas add up per minute and surface; an unwritten minute reads empty', async () => {
      const prefix = uniquePrefix('stats');
      const a = open(prefix);
      // Embedded mode has one process: the second "replica" is the same store.
      const b = adapter.name === 'memory' ? a : open(prefix);
      const minute = Math.floor(Date.now() / 60_000);
      await a.add(minute, {
        gateway: { requests: 3, serverErrors: 1, clientErrors: 0, buckets: buckets(2, 3) },
        tasks: { requests: 2, serverErrors: 0, clientErrors: 2, buckets: buckets(0, 2) },
      });
      await b.add(minute, {
        gateway: { requests: 4, serverErrors: 0, clientErrors: 1, buckets: buckets(15, 4) },
      });
      await b.add(minute - 1, {
        tasks: { requests: 1, serverErrors: 0, clientErrors: 0, buckets: buckets(5, 1) },
      });

      const rows = await a.read([minute - 2, minute - 1, minute], SLOTS);
      expect(rows[0]).toEqual({});
      expect(rows[1]).toEqual({
        tasks: { requests: 1, serverErrors: 0, clientErrors: 0, buckets: buckets(5, 1) },
      });
      expect(rows[2].gateway).toEqual({
        requests: 7,
        serverErrors: 1,
        clientErrors: 1,
        buckets: buckets(2, 3).map((n, i) => n + buckets(15, 4)[i]),
      });
      expect(rows[2].tasks).toEqual({
        requests: 2,
        serverErrors: 0,
        clientErrors: 2,
        buckets: buckets(0, 2),
      });
    });
  },
);
