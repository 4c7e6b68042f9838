import {
  addCounts,
  emptyCounts,
  WINDOW_MINUTES,
  type MinuteCounts,
  type RecentStatsStore,
  type Surface,
} from '../../observability/recent-stats';

/** Embedded mode: the rows of the last window in a map, older ones dropped as new minutes come. */
export class MemoryRecentStats implements RecentStatsStore {
  private readonly rows = new Map<number, Partial<Record<Surface, MinuteCounts>>>();

  async add(minute: number, counts: Partial<Record<Surface, MinuteCounts>>): Promise<void> {
    let row = this.rows.get(minute);
    if (!row) this.rows.set(minute, (row = {}));
    for (const [surface, c] of Object.entries(counts) as [Surface, MinuteCounts][])
      addCounts((row[surface] ??= emptyCounts(c.buckets.length)), c);
    for (const old of this.rows.keys()) if (old <= minute - 2 * WINDOW_MINUTES) this.rows.delete(old);
  }

  async read(minutes: number[], _slots: number): Promise<Partial<Record<Surface, MinuteCounts>>[]> {
    return minutes.map((minute) => this.rows.get(minute) ?? {});
  }
}
