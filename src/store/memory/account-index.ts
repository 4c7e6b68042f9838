import type { IndexRange } from '../../listing';

/** Per account, index members (src/listing.ts) kept sorted: the embedded form of a Redis sorted set read by lex. */
export class MemoryAccountIndex {
  private readonly byAccount = new Map<string, string[]>();

  add(accountId: string, member: string): void {
    let members = this.byAccount.get(accountId);
    if (!members) this.byAccount.set(accountId, (members = []));
    // Members arrive almost always in time order: the append is the common case.
    if (!members.length || members[members.length - 1] < member) members.push(member);
    else {
      const at = lowerBound(members, member);
      if (members[at] !== member) members.splice(at, 0, member);
    }
  }

  remove(accountId: string, member: string): void {
    const members = this.byAccount.get(accountId);
    if (!members) return;
    const at = lowerBound(members, member);
    if (members[at] === member) members.splice(at, 1);
    if (!members.length) this.byAccount.delete(accountId);
  }

  /**
   * The page reader (src/listing.ts collectPage) of the account's records, each found by its id through `recordOf`
   * (null when gone: its entry is dropped as the list meets it).
   */
  records<T>(accountId: string, recordOf: (id: string) => T | null) {
    return async (range: IndexRange, n: number): Promise<{ member: string; record: T | null }[]> =>
      this.chunk(accountId, range, n).map((member) => {
        const record = recordOf(member.slice(member.indexOf(':') + 1));
        if (record === null) this.remove(accountId, member);
        return { member, record };
      });
  }

  /** Up to `n` members in `range`, newest first. */
  chunk(accountId: string, range: IndexRange, n: number): string[] {
    const members = this.byAccount.get(accountId) ?? [];
    const out: string[] = [];
    let at = (range.below === undefined ? members.length : lowerBound(members, range.below)) - 1;
    for (; at >= 0 && out.length < n; at--) {
      if (range.from !== undefined && members[at] < range.from) break;
      out.push(members[at]);
    }
    return out;
  }
}

/** The first position whose member is not below `member`. */
function lowerBound(members: readonly string[], member: string): number {
  let lo = 0;
  let hi = members.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (members[mid] < member) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
