import { DestinationSlots } from '../../src/webhooks/destinations';

/** Slots on a clock the test moves; waits still run on real timers, so the tests only use outcomes decided at once. */
function slotsAt(perDestination: number) {
  let now = 0;
  const slots = new DestinationSlots(perDestination, () => now);
  return { slots, advance: (ms: number) => (now += ms) };
}

describe('DestinationSlots: a destination is judged by its answers, not by the attempt around them', () => {
  test("a fast receiver stays fast however long this replica's own work around its answers takes", async () => {
    const { slots, advance } = slotsAt(1);
    const first = (await slots.acquire('https://a.example'))!;
    first.sending();
    advance(5);
    first.answered(); // 5 ms to answer
    advance(10_000); // then a slow store write, still holding the slot
    const waiting = slots.acquire('https://a.example'); // full, but fast: waits for the slot
    first.release();
    const second = await waiting;
    expect(second).not.toBeNull();
    second!.release();
  });

  test('a receiver slow to answer puts the next attempt off at once', async () => {
    const { slots, advance } = slotsAt(1);
    const first = (await slots.acquire('https://b.example'))!;
    first.sending();
    advance(300); // no answer yet after 300 ms (FAST_MS is 250)
    expect(await slots.acquire('https://b.example')).toBeNull();
    first.answered();
    first.release();
    // Its 300 ms answer is now its average: still slow, put off while its slot is taken.
    const again = (await slots.acquire('https://b.example'))!;
    expect(await slots.acquire('https://b.example')).toBeNull();
    again.release();
  });

  test('slots are counted from acquire to release, answered or not; other destinations are apart', async () => {
    const { slots } = slotsAt(2);
    const a1 = (await slots.acquire('https://c.example'))!;
    const a2 = (await slots.acquire('https://c.example'))!;
    a1.sending();
    a1.answered();
    const other = await slots.acquire('https://d.example');
    expect(other).not.toBeNull();
    // c is full (two held) though one is answered: a third waits, and gets the first slot released.
    const third = slots.acquire('https://c.example');
    a2.release();
    a2.release(); // a second release gives nothing back twice
    expect(await third).not.toBeNull();
    a1.release();
  });
});
