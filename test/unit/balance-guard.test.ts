import { AccountsService } from '../../src/accounts/service';
import { BalanceGuard } from '../../src/accounts/budgets';
import { ApiError } from '../../src/errors';
import { MemoryAccountStore } from '../../src/store/memory/accounts';

/** The gateway's balance check: a balance seen above zero admits without a store read; zero is read again. */
describe('BalanceGuard', () => {
  let now = 1_800_000_000_000;
  const clock = { now: () => now };

  async function setUp(balanceUsd: number) {
    const store = new MemoryAccountStore();
    let reads = 0;
    const counted = {
      balanceMicros: (accountId: string) => {
        reads++;
        return store.balanceMicros(accountId);
      },
    };
    const accounts = new AccountsService(store, clock);
    const guard = new BalanceGuard(counted, clock, 1000);
    accounts.onBalance((accountId, micros) => guard.note(accountId, micros));
    const { accountId } = await accounts.createAccount('a', balanceUsd);
    return { store, accounts, guard, accountId, reads: () => reads };
  }

  const refusal = async (check: Promise<void> | undefined) => {
    const err = await Promise.resolve(check).then(
      () => undefined,
      (e: unknown) => e,
    );
    return err instanceof ApiError ? [err.status, err.code] : err;
  };

  test('no store read per call while the balance is positive: one per account and second, behind a call', async () => {
    const { guard, accountId, reads } = await setUp(10);
    // The account's first credit was posted through this replica: its balance is known without a read.
    for (let i = 0; i < 100; i++) expect(guard.check(accountId)).toBeUndefined();
    expect(reads()).toBe(0);
    now += 1000; // stale: answered from what is known, read again behind the call
    expect(guard.check(accountId)).toBeUndefined();
    for (let i = 0; i < 100; i++) expect(guard.check(accountId)).toBeUndefined();
    expect(reads()).toBe(1);
  });

  test('an account this replica knows nothing of is read before its first call', async () => {
    const { store, accountId } = await setUp(10);
    let reads = 0;
    const fresh = new BalanceGuard(
      { balanceMicros: (id) => (reads++, store.balanceMicros(id)) },
      clock,
      1000,
    );
    await fresh.check(accountId);
    expect(fresh.check(accountId)).toBeUndefined();
    expect(reads).toBe(1);
  });

  test("this replica's charge that empties the balance refuses the next call; a credit admits the one after", async () => {
    const { accounts, guard, accountId, reads } = await setUp(1);
    await guard.check(accountId);
    await accounts.chargeAtMost(accountId, 5_000_000, 'llm:1'); // takes the 1 USD left
    expect(await refusal(guard.check(accountId))).toEqual([402, 'insufficient_balance']);
    expect(await refusal(guard.check(accountId))).toEqual([402, 'insufficient_balance']);
    const readsWhileEmpty = reads();
    await accounts.credit(accountId, 2, 'topup:1');
    expect(guard.check(accountId)).toBeUndefined(); // the credit posted here is known at once: no read
    expect(reads()).toBe(readsWhileEmpty);
  });

  test('a balance emptied through another replica is refused here after the next read, within a second', async () => {
    const { store, guard, accountId } = await setUp(1);
    const otherReplica = new AccountsService(store, clock);
    await guard.check(accountId);
    await otherReplica.chargeAtMost(accountId, 5_000_000, 'llm:elsewhere');
    expect(guard.check(accountId)).toBeUndefined(); // not seen here yet: the stated bound
    now += 1000;
    expect(guard.check(accountId)).toBeUndefined(); // stale: answered from what is known, a read starts behind it
    await new Promise((r) => setImmediate(r));
    expect(await refusal(guard.check(accountId))).toEqual([402, 'insufficient_balance']);
  });

  test('what this replica served and has not yet posted counts: the call that owes the balance refuses the next, before any posting', async () => {
    const { accounts, accountId, store, reads } = await setUp(1);
    const owed = new Map<string, number>();
    const guard = new BalanceGuard({ balanceMicros: (id) => store.balanceMicros(id) }, clock, 1000, {
      byAccount: (id) => owed.get(id) ?? 0,
      byKey: () => 0,
    });
    accounts.onBalance((id, micros) => guard.note(id, micros));
    await guard.check(accountId);
    owed.set(accountId, 999_999);
    expect(guard.check(accountId)).toBeUndefined(); // a micro-dollar is still free
    owed.set(accountId, 1_000_000);
    expect(await refusal(guard.check(accountId))).toEqual([402, 'insufficient_balance']);
    // Posted: the balance the posting reports is what is left, and nothing is owed any more.
    await accounts.chargeAtMost(accountId, 1_000_000, 'llm:tab');
    owed.delete(accountId);
    expect(await refusal(guard.check(accountId))).toEqual([402, 'insufficient_balance']);
    expect(reads()).toBe(0); // the counted store is setUp's; this guard read its own
  });

  test("a read under way when this replica's posting lands does not bring back the balance from before it", async () => {
    const { store, accounts, accountId } = await setUp(1);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const guard = new BalanceGuard(
      {
        balanceMicros: async (id) => {
          const micros = await store.balanceMicros(id); // read before the posting
          await held;
          return micros;
        },
      },
      clock,
      1000,
    );
    accounts.onBalance((id, micros) => guard.note(id, micros));
    const reading = guard.check(accountId);
    await new Promise((r) => setImmediate(r));
    await accounts.chargeAtMost(accountId, 1_000_000, 'llm:tab'); // this replica's posting, while the read is out
    release();
    // The read saw 1 USD, older than the posting: the posting's balance stands, for this call and the next.
    expect(await refusal(reading)).toEqual([402, 'insufficient_balance']);
    expect(await refusal(guard.check(accountId))).toEqual([402, 'insufficient_balance']);
  });
});
