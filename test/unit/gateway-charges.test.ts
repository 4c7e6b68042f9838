import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BalanceGuard, BudgetGuard } from '../../src/accounts/budgets';
import { AccountsService } from '../../src/accounts/service';
import { GatewayCharges, type Charge, type PostCharge } from '../../src/gateway/charges';
import { ApiError } from '../../src/errors';
import { createLogger } from '../../src/observability/logger';
import { MemoryAccountStore } from '../../src/store/memory/accounts';
import { LogCapture, testConfig } from '../helpers/services';

const host = os.hostname().replace(/[^A-Za-z0-9.]/g, '_');
const files = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir) : []);
const lines = (dir: string) =>
  files(dir)
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n'))
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Charge);
const until = async (ok: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 20));
  }
};
/** Far longer than any test: flushes happen when a test calls flush(). */
const MANUAL = 5_000;

describe('GatewayCharges', () => {
  let dir: string;
  let logs: LogCapture;
  const logger = () => createLogger(testConfig(), (logs = new LogCapture()));
  const open: GatewayCharges[] = [];
  /** The charges' clock: the system's, unless a test sets the time. */
  let at: number | undefined;
  const clock = { now: () => at ?? Date.now() };
  const charges = (post: PostCharge, journal = true, flushMs = MANUAL) => {
    const c = new GatewayCharges({
      post,
      logger: logger(),
      clock,
      flushMs,
      journalDir: journal ? dir : undefined,
    });
    open.push(c);
    return c;
  };
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-charges-unit-'))));
  afterEach(async () => {
    at = undefined;
    await Promise.all(open.splice(0).map((c) => c.close(0)));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a key and model's calls are one posting per flush, with their summed price; until then they are owed", async () => {
    const posted: Charge[] = [];
    const c = charges(async (charge) => void posted.push({ ...charge }), false);
    for (let i = 0; i < 100; i++) c.add('acct_1', 'key_a', 'gpt-x', 7);
    c.add('acct_1', 'key_a', 'claude-y', 5);
    c.add('acct_1', 'key_b', 'gpt-x', 3);
    c.add('acct_2', 'key_c', 'gpt-x', 11);
    c.add('acct_2', 'key_c', 'gpt-x', 0); // free: nothing owed, no tab
    expect(c.byAccount('acct_1')).toBe(708);
    expect(c.byKey('key_a')).toBe(705);
    expect(c.byKey('key_b')).toBe(3);
    expect(c.byAccount('acct_2')).toBe(11);
    expect(posted).toEqual([]);

    await c.flush();
    expect(posted.map(({ accountId, keyId, model, micros }) => [accountId, keyId, model, micros])).toEqual([
      ['acct_1', 'key_a', 'gpt-x', 700],
      ['acct_1', 'key_a', 'claude-y', 5],
      ['acct_1', 'key_b', 'gpt-x', 3],
      ['acct_2', 'key_c', 'gpt-x', 11],
    ]);
    expect(new Set(posted.map((p) => p.reference)).size).toBe(4);
    for (const p of posted) expect(p.reference).toMatch(/^llm:[0-9a-f-]{36}$/);
    expect([c.byAccount('acct_1'), c.byAccount('acct_2'), c.byKey('key_a'), c.pending]).toEqual([0, 0, 0, 0]);

    // The next interval's calls open new tabs under new references.
    c.add('acct_1', 'key_a', 'gpt-x', 7);
    await c.flush();
    expect(posted).toHaveLength(5);
    expect(posted[4].reference).not.toBe(posted[0].reference);
  });

  test('calls either side of UTC midnight go on two tabs, each dated in its own day', async () => {
    const posted: Charge[] = [];
    const c = charges(async (charge) => void posted.push({ ...charge }), false);
    const midnight = Date.UTC(2026, 10, 27);
    at = midnight - 1;
    c.add('acct_1', 'key_a', 'm', 2);
    at = midnight;
    c.add('acct_1', 'key_a', 'm', 3);
    c.add('acct_1', 'key_a', 'm', 4);
    await c.flush();
    expect(posted.map((p) => [p.micros, p.at])).toEqual([
      [2, midnight - 1],
      [7, midnight],
    ]);
  });

  test("settle(account) posts that account's tabs only, and resolves once the ledger has them", async () => {
    const posted: string[] = [];
    const c = charges(async ({ accountId, micros }) => void posted.push(`${accountId}:${micros}`));
    c.add('acct_1', 'key_a', 'm', 2);
    c.add('acct_2', 'key_b', 'm', 3);
    await c.settle('acct_1');
    expect(posted).toEqual(['acct_1:2']);
    expect(c.byAccount('acct_2')).toBe(3);
    await c.settle('acct_9'); // owes nothing: nothing to do
    await c.settle();
    expect(posted).toEqual(['acct_1:2', 'acct_2:3']);
  });

  test("each call's price is journaled under its tab's reference in one append per turn; written() settles when they are in", async () => {
    const c = charges(async () => undefined);
    c.add('acct_1', 'key_a', 'm', 1);
    c.add('acct_1', 'key_a', 'm', 2);
    const written = c.written();
    expect(written).toBeDefined();
    expect(lines(dir)).toEqual([]); // not yet: the append comes once this turn's calls are done
    await written;
    const journaled = lines(dir);
    expect(journaled.map((l) => l.micros)).toEqual([1, 2]);
    expect(journaled[0].reference).toBe(journaled[1].reference);
    expect(journaled[0]).toMatchObject({ accountId: 'acct_1', keyId: 'key_a', model: 'm' });
    expect(c.written()).toBeUndefined(); // nothing waiting

    // A flush rewrites the journal with one line per outstanding reference, then posts: once posted, nothing is left.
    await c.flush();
    await c.flush();
    expect(lines(dir)).toEqual([]);
  });

  test('a tab the store cannot take stays owed and journaled, whole, and is posted again until it is in', async () => {
    const posted: Charge[] = [];
    let down = true;
    const c = charges(async (charge) => {
      if (down) throw new Error('connect ECONNREFUSED');
      posted.push({ ...charge });
    });
    c.add('acct_1', 'key_a', 'm', 26);
    c.add('acct_1', 'key_a', 'm', 4);
    await c.written();
    await c.flush();
    expect(c.byAccount('acct_1')).toBe(30);
    c.add('acct_1', 'key_a', 'm', 5); // a new tab: the closed one keeps its amount
    await c.flush();
    const journaled = lines(dir);
    expect(journaled.map((l) => l.micros).sort()).toEqual([30, 5].sort());
    down = false;
    await c.flush();
    expect(posted.map((p) => p.micros).sort()).toEqual([30, 5].sort());
    expect(c.byAccount('acct_1')).toBe(0);
    await c.flush();
    expect(lines(dir)).toEqual([]);
    await c.close();
    expect(fs.existsSync(dir)).toBe(false); // nothing outstanding: no file, and the emptied directory goes too
    expect(logs.text).toContain('posting gateway charges failed; kept and retried');
    expect(logs.text).toContain('gateway charges are being posted again');
  });

  test('a charge the ledger refuses for good (ApiError) is dropped and no longer owed, not retried forever', async () => {
    let calls = 0;
    const c = charges(async () => {
      calls++;
      throw new ApiError('not_found', 'No account with accountId acct_gone');
    });
    c.add('acct_gone', 'key_a', 'm', 5);
    await c.written();
    await c.flush();
    await c.flush();
    expect(calls).toBe(1);
    expect(c.byAccount('acct_gone')).toBe(0);
    expect(logs.text).toContain('gateway charge refused by the ledger; dropped');
  });

  test('a charge with its own reference (batch results) is owed, journaled and posted once, however often it is given', async () => {
    const posted: Charge[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const c = charges(async (charge) => {
      await held;
      posted.push(charge);
    });
    const batch = { accountId: 'acct_1', micros: 9000, reference: 'llm-batch:anthropic:b1', keyId: 'key_a' };
    const first = c.once(batch);
    const second = c.once(batch); // read again while the first is being posted
    expect(c.byAccount('acct_1')).toBe(9000);
    await c.written();
    expect(lines(dir)).toEqual([batch]);
    release();
    await Promise.all([first, second]);
    expect(posted).toEqual([batch]);
    expect(c.byAccount('acct_1')).toBe(0);
  });

  test('a journal left by a stopped process is taken over: a tab adds up its lines, an old journal posts each reference once', async () => {
    const tab = { accountId: 'acct_1', reference: 'llm:tab', keyId: 'key_a', model: 'm', at: 1 };
    fs.writeFileSync(
      path.join(dir, `tabs-${host}-999999999-00000000.jsonl`),
      [2, 3, 4].map((micros) => JSON.stringify({ ...tab, micros })).join('\n') + '\n{"cut short',
    );
    const old = { accountId: 'acct_1', micros: 7, reference: 'llm:old' };
    fs.writeFileSync(
      path.join(dir, `charges-${host}-999999998-00000000.jsonl`),
      `${JSON.stringify(old)}\n${JSON.stringify(old)}\n`,
    );
    const posted: Charge[] = [];
    const c = charges(async (charge) => void posted.push(charge));
    expect(c.byAccount('acct_1')).toBe(16); // owed from the start: the guards count it
    await c.flush();
    expect(posted.sort((a, b) => a.micros - b.micros)).toEqual([old, { ...tab, micros: 9 }]);
    expect(files(dir).filter((f) => !f.includes(`-${process.pid}-`))).toEqual([]);
    expect(logs.text).toContain('took over charges journaled by a stopped process');
  });

  test('a journal of an earlier process with this pid (a restarted container: node is pid 1 again) is taken over', async () => {
    const earlier = path.join(dir, `tabs-${host}-${process.pid}-ffffffff.jsonl`);
    const unposted = { accountId: 'acct_1', micros: 11, reference: 'llm:before-restart' };
    fs.writeFileSync(earlier, `${JSON.stringify(unposted)}\n`); // fresh: it was written a moment before the restart
    const posted: Charge[] = [];
    const c = charges(async (charge) => void posted.push(charge));
    expect(c.byAccount('acct_1')).toBe(11);
    await c.flush();
    expect(posted).toEqual([unposted]);
    expect(fs.existsSync(earlier)).toBe(false);
  });

  test("another live process's fresh journal is left alone; once stale, it is taken over", async () => {
    const theirs = path.join(dir, `tabs-${host}-${process.ppid}-00000000.jsonl`);
    const orphan = { accountId: 'acct_1', micros: 7, reference: 'llm:orphan' };
    fs.writeFileSync(theirs, `${JSON.stringify(orphan)}\n`);
    const posted: Charge[] = [];
    const c = charges(async (charge) => void posted.push(charge));
    await c.flush();
    expect(fs.existsSync(theirs)).toBe(true); // its process (our parent) is alive and it is fresh
    expect(posted).toEqual([]);

    const stale = (Date.now() - 60_000) / 1000;
    fs.utimesSync(theirs, stale, stale);
    await c.flush();
    expect(posted).toEqual([orphan]);
    expect(fs.existsSync(theirs)).toBe(false);
  });

  test('replayed after a crash, a tab the ledger already took is not taken again; one it did not take is, whole', async () => {
    const store = new MemoryAccountStore();
    const accounts = new AccountsService(store, { now: () => Date.now() });
    const { accountId } = await accounts.createAccount('a', 1);
    const post: PostCharge = (c) =>
      accounts.chargeAtMost(c.accountId, c.micros, c.reference, undefined, c.at);
    const c = charges(post);
    for (let i = 0; i < 10; i++) c.add(accountId, 'key_a', 'm', 100);
    await c.written();
    // The journal as it stood when the process died with the tab posted (before the rewrite dropped it).
    const [own] = files(dir);
    const journal = fs.readFileSync(path.join(dir, own), 'utf8');
    await c.flush();
    expect(await accounts.balanceUsd(accountId)).toBe(0.999);

    fs.writeFileSync(path.join(dir, `tabs-${host}-999999997-00000000.jsonl`), journal);
    await c.flush(); // takes it over and posts it: the ledger has the reference
    expect(await accounts.balanceUsd(accountId)).toBe(0.999);

    const unposted = journal.replaceAll(/llm:[0-9a-f-]+/g, 'llm:never-posted');
    fs.writeFileSync(path.join(dir, `tabs-${host}-999999996-00000000.jsonl`), unposted);
    await c.flush();
    expect(await accounts.balanceUsd(accountId)).toBe(0.998);
    expect((await accounts.ledger(accountId)).map((e) => [e.kind, e.amountMicros])).toEqual([
      ['credit', 1_000_000],
      ['charge', 1000],
      ['charge', 1000],
    ]);
  });

  test('a posted tab is counted once: the guards never see it both posted and owed', async () => {
    const store = new MemoryAccountStore();
    const accounts = new AccountsService(store, clock);
    const { accountId } = await accounts.createAccount('a', 0.0001); // 100 micro-USD
    const auth = { keyId: 'key_a', accountId, models: null, rateLimit: null };
    const c = charges(
      (charge, applied) =>
        accounts.chargeAtMost(
          charge.accountId,
          charge.micros,
          charge.reference,
          { keyId: charge.keyId!, model: 'm', source: 'gateway' },
          charge.at,
          applied,
        ),
      false,
    );
    const budgets = new BudgetGuard(store, clock, 60_000, c);
    const balance = new BalanceGuard(store, clock, 60_000, c);
    accounts.onSpend((id, keyId, micros, at) => budgets.spent(id, keyId, micros, at));
    accounts.onBalance((id, micros) => balance.note(id, micros));
    await store.setBudget(accountId, 'key:key_a', { period: 'day', limitMicros: 100, softPercent: null });
    await budgets.check(auth);
    await balance.check(accountId);

    // What a call checking in the same step as the posting's listeners would see.
    const seen: unknown[] = [];
    accounts.onSpend(() => {
      seen.push(budgets.check(auth) ?? 'admitted', balance.check(accountId) ?? 'admitted');
    });
    c.add(accountId, 'key_a', 'm', 60);
    expect(() => budgets.check(auth)).not.toThrow();
    await c.flush();
    expect(seen).toEqual(['admitted', 'admitted']); // 60 spent and 40 left, not 120 and -20
  });

  test('the interval closes and posts tabs by itself; close() posts what is open', async () => {
    const posted: number[] = [];
    const c = charges(async (charge) => void posted.push(charge.micros), true, 50);
    c.add('acct_1', 'key_a', 'm', 3);
    await until(() => posted.length === 1);
    c.add('acct_1', 'key_a', 'm', 4);
    await c.close();
    expect(posted).toEqual([3, 4]);
  });
});
