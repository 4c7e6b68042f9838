import type { RedisOptions } from 'ioredis';
import type { RedisClient } from './connection';

/** How many key events the stream keeps (XADD MAXLEN ~): a reader further behind finds a gap and drops all. */
export const KEY_EVENTS_MAXLEN = 10_000;

/** What a key-event reader does with what it reads. */
export interface KeyEventListener {
  /** An event for one key (revoked today; expiry, rotation, budgets later): drop what is held for its hash. */
  keyChanged(hash: string): void;
  /** Events may have been missed (the stream was trimmed past this reader, or begun again): drop everything. */
  lostTrack(): void;
}

export interface KeyEventFeedTiming {
  /** How long one read blocks waiting for an event. */
  blockMs: number;
  /** A read unanswered this long is given up and the connection dropped (a half-open connection). */
  readTimeoutMs: number;
  /** Pause before a failed read is retried (and a lost connection opened again). */
  retryMs: number;
}

type StreamEntries = [id: string, fields: string[]][];

/**
 * Follows the key-event stream (written by key_events.lua) on a connection of its own, since blocking reads must
 * not hold up the commands of the request path. One loop per process: `XREAD BLOCK` from the last id read,
 * starting at the stream's newest entry when started (read first, so nothing written between start-up and the
 * first read is missed). After a failed read it resumes from the last id; the events' `seq` (1, 2, 3, ...) shows
 * whether any were trimmed away meanwhile, and then the listener drops everything.
 *
 * `appliedAt` is the time (performance.now()) the last completed read was sent: every event written before then
 * has been handed to the listener. Whoever trusts local state measures its age from there.
 */
export class KeyEventFeed {
  appliedAt = -Infinity;
  private connection: RedisClient | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private lastId = '';
  private lastSeq = 0;
  private wake: (() => void) | undefined;
  /** Settles when stop() is called: a read in flight is raced against it, never waited for. */
  private readonly stopping: Promise<void>;
  private signalStop!: () => void;

  constructor(
    /** Opens the feed's own connection with these options (the feed needs them). */
    private readonly connect: (options: RedisOptions) => RedisClient,
    private readonly stream: string,
    private readonly listener: KeyEventListener,
    private readonly timing: KeyEventFeedTiming,
  ) {
    this.stopping = new Promise<void>((resolve) => (this.signalStop = resolve));
  }

  /** Opens the connection and starts following; later calls do nothing. */
  start(): void {
    if (this.running || this.stopped) return;
    // No reconnecting of its own (the loop reconnects), so stop() never finds a read parked in a retry queue.
    const connection = this.connect({ commandTimeout: this.timing.readTimeoutMs, retryStrategy: () => null });
    // A failed read is the loop's business (it retries, and the age of appliedAt tells the gate); no stray logs.
    connection.on('error', () => undefined);
    this.connection = connection;
    this.running = this.follow(connection);
  }

  /** Stops following and closes the connection at once (a blocked read is not waited for). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.appliedAt = -Infinity;
    this.signalStop();
    this.wake?.();
    if (this.connection && this.connection.status !== 'end') this.connection.disconnect();
    await this.running;
  }

  private async follow(connection: RedisClient): Promise<void> {
    while (!this.stopped) {
      const sentAt = performance.now();
      try {
        if (this.lastId === '') await this.unlessStopped(this.position(connection));
        else {
          const reply = await this.unlessStopped(
            connection.xread('BLOCK', this.timing.blockMs, 'STREAMS', this.stream, this.lastId),
          );
          if (reply) this.apply(reply[0][1]);
        }
        if (!this.stopped) this.appliedAt = sentAt;
      } catch (err) {
        if (this.stopped) break;
        // An answer that never came (a half-open connection): drop the connection rather than queue behind it.
        if (err instanceof Error && err.message === 'Command timed out') connection.disconnect();
        await this.pause();
        if (!this.stopped && connection.status === 'end') connection.connect().catch(() => undefined);
      }
    }
  }

  /**
   * `read`, or nothing once stop() is called. A Redis Cluster client can hold a read for a slot whose master just
   * died in its own retry queue, past disconnect(): stop() must not wait for it.
   */
  private unlessStopped<T>(read: Promise<T>): Promise<T | undefined> {
    read.catch(() => undefined); // abandoned at stop(): its late failure is nobody's business
    return Promise.race([read, this.stopping.then(() => undefined)]);
  }

  /** Waits retryMs, or until stop(). */
  private pause(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.timing.retryMs);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Starts at the stream's newest entry (or before the first, when there is none yet). */
  private async position(connection: RedisClient): Promise<void> {
    const [newest] = await connection.xrevrange(this.stream, '+', '-', 'COUNT', 1);
    this.lastId = newest ? newest[0] : '0-0';
    this.lastSeq = newest ? seqOf(newest[1]) : 0;
  }

  private apply(entries: StreamEntries): void {
    for (const [id, fields] of entries) {
      const seq = seqOf(fields);
      if (seq === this.lastSeq + 1) this.listener.keyChanged(field(fields, 'hash'));
      else this.listener.lostTrack();
      this.lastId = id;
      this.lastSeq = seq;
    }
  }
}

function field(fields: string[], name: string): string {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return '';
}

function seqOf(fields: string[]): number {
  return Number(field(fields, 'seq')) || 0;
}
