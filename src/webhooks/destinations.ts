/**
 * Per-destination slots of one delivery worker: a destination (URL origin) holds at most `perDestination` attempts
 * at once. What happens to an attempt that finds its destination full depends on how that destination answers:
 *
 * - while it answers fast (its answers take at most FAST_MS, and none awaited now is older than that), the attempt waits
 *   in a short in-process queue for a slot, so a burst of thousands of webhooks to one healthy receiver flows at
 *   that receiver's speed instead of being put off by growing delays;
 * - once it is slow, the attempt is put off at once (re-enqueued with a growing delay) and queued ones give up within
 *   FAST_MS, so a slow or silent receiver never holds the job slots other receivers need for longer than that.
 */
const FAST_MS = 250;
/** The longest an attempt waits for a fast receiver's slot. */
const MAX_WAIT_MS = 2_000;
/** Latencies kept for destinations not currently busy (the least recently used is forgotten first). */
const MAX_REMEMBERED = 10_000;
/** Weight of a new latency sample in the moving average. */
const ALPHA = 0.3;

interface Destination {
  /** Slots held now. */
  held: number;
  /** Start times of the requests waiting for this receiver's answer now. */
  out: Set<number[]>;
  waiters: ((slot: Slot) => void)[];
}

/**
 * A held slot. `sending()` and `answered()` bracket the receiver's part of the attempt, the only part its speed is
 * judged by (a slow store write of this replica's must not make a fast receiver look slow); `release()` gives the
 * slot back once the attempt is over.
 */
export interface Slot {
  sending(): void;
  answered(): void;
  release(): void;
}

export class DestinationSlots {
  private readonly busy = new Map<string, Destination>();
  /** Moving average of attempt latency per destination, in ms. */
  private readonly latency = new Map<string, number>();

  constructor(
    private readonly perDestination: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A slot for `destination`, or null when the attempt should be put off instead. */
  async acquire(destination: string): Promise<Slot | null> {
    let state = this.busy.get(destination);
    if (!state) this.busy.set(destination, (state = { held: 0, out: new Set(), waiters: [] }));
    if (state.held < this.perDestination) return this.hold(destination, state);
    const latency = this.latency.get(destination) ?? 1;
    // Wait only while it is fast, and only when the queue ahead should drain within the wait.
    const servable = (this.perDestination * MAX_WAIT_MS) / Math.max(latency, 1);
    if (!this.fast(destination, state) || state.waiters.length >= servable) return null;
    const since = this.now();
    return new Promise<Slot | null>((resolve) => {
      const grant = (slot: Slot) => {
        clearTimeout(timer);
        resolve(slot);
      };
      const check = () => {
        if (this.now() - since < MAX_WAIT_MS && this.fast(destination, state)) {
          timer = setTimeout(check, FAST_MS);
          return;
        }
        const at = state.waiters.indexOf(grant);
        if (at >= 0) state.waiters.splice(at, 1);
        resolve(null);
      };
      let timer = setTimeout(check, FAST_MS);
      state.waiters.push(grant);
    });
  }

  /** Answers fast: its average is at most FAST_MS, and no answer awaited now has taken longer. */
  private fast(destination: string, state: Destination): boolean {
    if ((this.latency.get(destination) ?? 0) > FAST_MS) return false;
    const now = this.now();
    for (const [started] of state.out) if (now - started > FAST_MS) return false;
    return true;
  }

  private hold(destination: string, state: Destination): Slot {
    state.held++;
    const token = [0];
    let released = false;
    return {
      sending: () => {
        token[0] = this.now();
        state.out.add(token);
      },
      answered: () => this.answered(destination, state, token),
      release: () => {
        if (released) return;
        released = true;
        this.answered(destination, state, token);
        this.release(destination, state);
      },
    };
  }

  /** The receiver's part is over: its time goes into the destination's average. */
  private answered(destination: string, state: Destination, token: number[]): void {
    if (!state.out.delete(token)) return;
    const took = this.now() - token[0];
    const previous = this.latency.get(destination);
    this.latency.delete(destination); // re-inserted last: the map's order is least recently used first
    this.latency.set(destination, previous === undefined ? took : previous + ALPHA * (took - previous));
    if (this.latency.size > MAX_REMEMBERED) this.latency.delete(this.latency.keys().next().value!);
  }

  private release(destination: string, state: Destination): void {
    state.held--;
    const next = state.waiters.shift();
    // The slot passes to the next waiter in this same step: no other acquire can take it in between.
    if (next) next(this.hold(destination, state));
    else if (state.held === 0) this.busy.delete(destination);
  }
}
