import http from 'node:http';
import { describeRedis } from '../helpers/redis';
import { startReceiver } from '../helpers/receiver';
import { createHarness, fundedKey, type TestHarness } from '../helpers/services';

/**
 * One slow receiver must not hold everyone up: a worker with 8 job slots, an account whose receiver never answers
 * (no attempt ends within the test: the delivery timeout is 60 s) with 1,000 deliveries queued, and another account's
 * healthy receiver. Without the per-destination cap the silent receiver holds all 8 slots for the whole minute and no
 * healthy delivery arrives until then; with it, it holds 2 and every healthy delivery arrives while it does. No
 * timing bound: the order of events is the assertion.
 */
const SLOW_TIMEOUT_MS = 60_000;
/**
 * Deliveries queued for the receiver that never answers. Each one takes a slot turn to be put off (two Redis round
 * trips) while its destination is busy, so a healthy delivery enqueued behind them waits about QUEUED / slots turns:
 * 2,000 behind 4 slots took 0.9-1.0 s on a quiet machine and 2.4 s under the full suite's load, hence 1,000 behind 8.
 */
const QUEUED = 1000;

/** A receiver that reads each request and never answers. */
async function silentReceiver() {
  let count = 0;
  let open = 0;
  let maxOpen = 0;
  const server = http.createServer((req) => {
    count++;
    maxOpen = Math.max(maxOpen, ++open);
    req.socket.once('close', () => open--);
    req.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    get count() {
      return count;
    },
    /** Requests it holds now. */
    get open() {
      return open;
    },
    /** The most requests it held at once. */
    get maxOpen() {
      return maxOpen;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describeRedis('delivery fairness (Redis, one worker)', () => {
  let h: TestHarness;
  beforeAll(() => {
    h = createHarness({
      redis: true,
      overlay: {
        security: { allowPrivateTargets: true },
        jobs: { concurrency: 8 },
        webhooks: { timeoutMs: SLOW_TIMEOUT_MS, retryDelaysMs: [60_000], perDestinationConcurrency: 2 },
      },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  test("a healthy receiver's deliveries all arrive while another account's receiver holds its attempts open", async () => {
    const slow = await silentReceiver();
    const healthy = await startReceiver();
    try {
      const { accountId: a } = await fundedKey(h.services, 1);
      const { accountId: b } = await fundedKey(h.services, 1);
      const webhook = (accountId: string, url: string, eventId: string) =>
        h.services.deliveries.enqueue({
          kind: 'webhook',
          accountId,
          url,
          body: `{"id":"${eventId}"}`,
          eventId,
        });

      await Promise.all(Array.from({ length: QUEUED }, (_, i) => webhook(a, slow.url, `evt_slow_${i}`)));
      // The slow receiver holds its share of the slots.
      const deadline = Date.now() + 5000;
      while (slow.count < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(slow.count).toBe(2);

      for (let i = 0; i < 20; i++) await webhook(b, healthy.url, `evt_ok_${i}`);
      // Well inside the silent receiver's 60 s: if it held every slot, nothing would arrive before then.
      await healthy.waitFor(20, SLOW_TIMEOUT_MS / 3);
      expect(new Set(healthy.received.map((r) => r.eventId)).size).toBe(20);
      // Every slow attempt is still open, and never more than its share at once however many are queued for it.
      expect(slow.count).toBe(2);
      expect(slow.maxOpen).toBe(2);
      expect(slow.open).toBe(2);
    } finally {
      await slow.close();
      await healthy.close();
    }
  }, 45_000);
});
