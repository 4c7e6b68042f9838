import type { Store } from '../../src/store';
import { uniquePrefix } from '../helpers/redis';
import { storeAdapters } from './stores';

const adapters = storeAdapters();

describe.each(adapters.map((a) => [a.name, a] as const))('UsageStore contract (%s)', (_name, adapter) => {
  let store: Store;
  let prefix: string;

  beforeEach(() => {
    prefix = uniquePrefix('usage');
    store = adapter.create(prefix);
  });
  afterEach(async () => {
    await store.close();
    await adapter.cleanup();
  });

  test('sums add up per key and model; an unknown key has no usage', async () => {
    await store.usage.add('key_1', 'model-a', {
      requests: 2,
      input: 10,
      output: 4,
      cacheRead: 0,
      cacheWrite: 3,
      reasoning: 0,
    });
    await store.usage.add('key_1', 'model-a', {
      requests: 1,
      input: 5,
      output: 1,
      cacheRead: 7,
      cacheWrite: 0,
      reasoning: 4,
    });
    await store.usage.add('key_1', 'model:b/c', {
      requests: 1,
      input: 1,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      reasoning: 0,
    });
    await store.usage.add('key_2', 'model-a', {
      requests: 1,
      input: 9,
      output: 9,
      cacheRead: 9,
      cacheWrite: 9,
      reasoning: 0,
    });

    expect(await store.usage.get('key_1')).toEqual({
      'model-a': { requests: 3, input: 15, output: 5, cacheRead: 7, cacheWrite: 3, reasoning: 4 },
      'model:b/c': { requests: 1, input: 1, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 },
    });
    expect(await store.usage.get('key_nope')).toEqual({});
  });

  test('concurrent adds from two instances all count', async () => {
    if (adapter.name === 'memory') return; // one process: nothing shared to race on
    const other = adapter.create(prefix);
    try {
      const one = { requests: 1, input: 2, output: 3, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => (i % 2 ? store : other).usage.add('key_1', 'm', one)),
      );
      expect((await store.usage.get('key_1')).m).toEqual({
        requests: 50,
        input: 100,
        output: 150,
        cacheRead: 0,
        cacheWrite: 0,
        reasoning: 0,
      });
    } finally {
      await other.close();
    }
  });
});
