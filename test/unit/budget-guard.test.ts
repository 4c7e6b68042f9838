import { BudgetGuard } from '../../src/accounts/budgets';
import { accountScope, stampOf, type BudgetState } from '../../src/accounts/usage';
import type { AuthContext } from '../../src/accounts/service';
import { ApiError } from '../../src/errors';

/** The gateway's budget check: what this replica's own postings say of the spend holds over a read begun before. */
describe('BudgetGuard', () => {
  let now = Date.UTC(2026, 10, 27, 12);
  const clock = { now: () => now };
  const auth: AuthContext = { keyId: 'k1', accountId: 'acc1', models: null, rateLimit: null };
  const state = (spentMicros: number): BudgetState => ({
    scope: accountScope,
    period: 'day',
    limitMicros: 10_000_000,
    softPercent: null,
    stamp: stampOf('day', now),
    spentMicros,
  });

  const tick = () => new Promise((r) => setImmediate(r));

  /** The check's refusal status (it throws at once when it knows, or its promise rejects once it has read). */
  const refusal = async (check: () => Promise<void> | undefined) => {
    const err = await Promise.resolve()
      .then(check)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    return err instanceof ApiError ? err.status : err;
  };

  test('a hard budget crossed by a posting here refuses at once, and a read begun before it does not bring the spend back', async () => {
    const reads: ((states: BudgetState[]) => void)[] = [];
    const store = {
      budgetStates: () => new Promise<BudgetState[]>((resolve) => reads.push(resolve)),
    };
    const guard = new BudgetGuard(store, clock, 1000);

    const first = refusal(() => guard.check(auth));
    await tick();
    reads[0]([state(2_000_000)]);
    expect(await first).toBeUndefined();

    now += 1000; // stale: answered from what is known, read again behind the call
    expect(guard.check(auth)).toBeUndefined();
    expect(reads).toHaveLength(2);

    // A posting through this replica crossed the hard limit while that read was under way.
    guard.note({ ...state(10_500_000), accountId: auth.accountId, level: 'hard' });
    expect(await refusal(() => guard.check(auth))).toBe(402);

    // The read answers with the spend from before the posting: the posting's view stays until the next read.
    reads[1]([state(2_000_000)]);
    await tick();
    expect(await refusal(() => guard.check(auth))).toBe(402);
  });
});
