import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ChargeJournal, type Charge } from '../../src/gateway/charge-journal';
import { ApiError } from '../../src/errors';
import { createLogger } from '../../src/observability/logger';
import { LogCapture, testConfig } from '../helpers/services';

const host = os.hostname().replace(/[^A-Za-z0-9.]/g, '_');
const lines = (dir: string) =>
  fs
    .readdirSync(dir)
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

describe('ChargeJournal', () => {
  let dir: string;
  let logs: LogCapture;
  const logger = () => createLogger(testConfig(), (logs = new LogCapture()));
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'genway-journal-unit-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('a charge the store refuses to take is kept, journaled and posted again until it is in', async () => {
    const posted: Charge[] = [];
    let down = true;
    const journal = new ChargeJournal(
      dir,
      async (c) => {
        if (down) throw new Error('connect ECONNREFUSED');
        posted.push(c);
      },
      logger(),
    );
    const charge = { accountId: 'acct_1', micros: 26, reference: 'llm:a' };
    await journal.charge(charge);
    expect(journal.pending).toBe(1);
    expect(lines(dir)).toEqual([charge]);
    down = false;
    await until(() => posted.length === 1);
    expect(posted).toEqual([charge]);
    await until(() => lines(dir).length === 0); // the next rewrite keeps only what is outstanding
    await journal.close();
    expect(fs.existsSync(dir)).toBe(false); // nothing outstanding: no file, and the emptied directory goes too
    expect(logs.text).toContain('posting gateway charges failed; kept and retried');
    expect(logs.text).toContain('gateway charges are being posted again');
  });

  test('the charges of one turn of the event loop are appended together, and written() settles once they are in', async () => {
    const journal = new ChargeJournal(dir, async () => undefined, logger());
    const a = { accountId: 'acct_1', micros: 1, reference: 'llm:t1' };
    const b = { accountId: 'acct_1', micros: 2, reference: 'llm:t2' };
    const posted = [journal.charge(a), journal.charge(b)];
    const written = journal.written();
    expect(written).toBeDefined();
    expect(lines(dir)).toEqual([]); // not yet: the append comes once this turn's calls are done
    await written;
    expect(lines(dir)).toEqual([a, b]);
    expect(journal.written()).toBeUndefined(); // nothing waiting
    await Promise.all(posted);
    expect(journal.pending).toBe(0);
    await journal.close();
  });

  test('a charge the ledger refuses for good (ApiError) is dropped, not retried forever', async () => {
    let calls = 0;
    const journal = new ChargeJournal(
      dir,
      async () => {
        calls++;
        throw new ApiError('not_found', 'No account with accountId acct_gone');
      },
      logger(),
    );
    await journal.charge({ accountId: 'acct_gone', micros: 5, reference: 'llm:b' });
    expect(journal.pending).toBe(0);
    await new Promise((r) => setTimeout(r, 1200));
    expect(calls).toBe(1);
    await journal.close();
    expect(logs.text).toContain('gateway charge refused by the ledger; dropped');
  });

  test("another live process's fresh journal is left alone; once stale, it is taken over and posted once", async () => {
    const theirs = path.join(dir, `charges-${host}-${process.ppid}-00000000.jsonl`);
    const orphan = { accountId: 'acct_1', micros: 7, reference: 'llm:orphan' };
    fs.writeFileSync(theirs, `${JSON.stringify(orphan)}\n${JSON.stringify(orphan)}\n{"cut short`);
    const posted: Charge[] = [];
    const journal = new ChargeJournal(dir, async (c) => void posted.push(c), logger());
    await new Promise((r) => setTimeout(r, 1200));
    expect(fs.existsSync(theirs)).toBe(true); // its process (our parent) is alive and it is fresh
    expect(posted).toEqual([]);

    const old = (Date.now() - 60_000) / 1000;
    fs.utimesSync(theirs, old, old);
    await until(() => posted.length === 1);
    expect(posted).toEqual([orphan]);
    expect(fs.existsSync(theirs)).toBe(false);
    await journal.close();
  });

  test('a journal left by a process of this host that is gone is taken over at once', async () => {
    const gone = path.join(dir, `charges-${host}-999999999-00000000.jsonl`);
    const orphan = { accountId: 'acct_1', micros: 9, reference: 'llm:gone' };
    fs.writeFileSync(gone, `${JSON.stringify(orphan)}\n`);
    const posted: Charge[] = [];
    const journal = new ChargeJournal(dir, async (c) => void posted.push(c), logger());
    await until(() => posted.length === 1);
    expect(posted).toEqual([orphan]);
    await journal.close();
    expect(fs.existsSync(dir)).toBe(false);
  });
});
