import fc from 'fast-check';
import { CopyRows } from '../../src/logs/copy-rows';
import type { RequestLogRow } from '../../src/logs/types';
import { logRow as row } from '../helpers/log-rows';

/**
 * What the database keeps of a row (the columns' own rules): text as UTF-8 without NUL (a lone surrogate becomes
 * U+FFFD), an int4 or int8 it cannot hold as null, or 0 where the column is NOT NULL; a duration as a float4, to the µs.
 */
function kept(r: RequestLogRow): RequestLogRow {
  const text = (s: string | null) => (s === null ? null : Buffer.from(s.replaceAll('\0', '')).toString());
  // An integer column has no -0.
  const int4 = (n: number | null) =>
    n !== null && Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 ? n + 0 : null;
  const int8 = (n: number | null) => (n !== null && Number.isSafeInteger(n) ? n + 0 : null);
  const float4 = (n: number | null) =>
    n !== null && Number.isFinite(n) ? Math.round(Math.fround(n) * 1000) / 1000 : null;
  return {
    time: r.time,
    requestId: text(r.requestId)!,
    accountId: text(r.accountId),
    keyId: text(r.keyId),
    surface: r.surface,
    method: text(r.method)!,
    route: text(r.route)!,
    model: text(r.model),
    upstream: text(r.upstream),
    upstreamModel: text(r.upstreamModel),
    status: Number.isInteger(r.status) && r.status >= -(2 ** 15) && r.status < 2 ** 15 ? r.status + 0 : 0,
    errorType: text(r.errorType),
    inputTokens: int4(r.inputTokens),
    outputTokens: int4(r.outputTokens),
    cachedTokens: int4(r.cachedTokens),
    cacheWriteTokens: int4(r.cacheWriteTokens),
    reasoningTokens: int4(r.reasoningTokens),
    costMicros: int8(r.costMicros) ?? 0,
    latencyMs: float4(r.latencyMs) ?? 0,
    ttfbMs: float4(r.ttfbMs),
    userAgent: text(r.userAgent),
    clientIp: text(r.clientIp),
    taskId: text(r.taskId),
    batchId: text(r.batchId),
    requestBytes: int8(r.requestBytes),
    responseBytes: int8(r.responseBytes),
  };
}

describe("request rows in COPY's binary format", () => {
  test('a row reads back exactly as taken; a NUL is dropped, as PostgreSQL text holds none', () => {
    const r = row(4, { errorType: 'rate_limited', ttfbMs: 0.25, taskId: 't', batchId: 'b', requestBytes: 9 });
    expect(CopyRows.ofRows([r]).rows()).toEqual([r]);
    expect(CopyRows.ofRows([row(1, { userAgent: 'a\u0000b\\\u0000' })]).rows()[0].userAgent).toBe('ab\\');
  });

  test("the batch is COPY's whole input: its signature and header, a tuple of 26 fields a row, the trailer", () => {
    const copy = CopyRows.ofRows([row(1), row(2)]).copy();
    expect(copy.subarray(0, 19)).toEqual(Buffer.from('PGCOPY\n\xff\r\n\0\0\0\0\0\0\0\0\0', 'latin1'));
    expect(copy.readInt16BE(19)).toBe(26);
    // The time: 8 bytes, µs since 2000-01-01 UTC.
    expect(copy.readInt32BE(21)).toBe(8);
    expect(copy.readBigInt64BE(25)).toBe(BigInt(1_800_000_000_001 - 946_684_800_000) * 1000n);
    expect(copy.subarray(copy.length - 2)).toEqual(Buffer.from([0xff, 0xff]));
  });

  test('rows written into a reused batch read back as the database keeps them, for any text and number', () => {
    // A small pool too, so runs of columns repeat from row to row, whole or with one column changed.
    const text = fc.option(
      fc.oneof(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.string({ maxLength: 40 }),
        fc.constantFrom('a', 'b', 'é', '\u0000'),
      ),
    );
    const number = fc.option(
      fc.oneof(
        fc.integer(),
        fc.double(),
        fc.maxSafeInteger(),
        fc.constantFrom(
          0,
          -0,
          2 ** 31 - 1,
          2 ** 31,
          -(2 ** 31),
          2 ** 32,
          2 ** 53 - 1,
          2 ** 53,
          -1,
          1e21,
          0.1,
        ),
        fc.integer({ min: -1e9, max: 2 ** 31 }).map((n) => n / 1000),
      ),
    );
    // Before 2000 and after 2038, to the year 2109 (µs past 2^53 would be past the year 2255).
    const time = fc.oneof(fc.integer({ min: 0, max: 2 ** 42 }), fc.integer({ min: 1.7e12, max: 1.9e12 }));
    const anyRow = fc
      .tuple(
        fc.array(text, { minLength: 11, maxLength: 11 }),
        fc.array(number, { minLength: 11, maxLength: 11 }),
        time,
      )
      .map(([t, n, at]) =>
        row(1, {
          time: at,
          requestId: t[0] ?? '',
          accountId: t[1],
          keyId: t[2],
          model: t[3],
          upstream: t[4],
          upstreamModel: t[5],
          errorType: t[6],
          userAgent: t[7],
          clientIp: t[8],
          taskId: t[9],
          batchId: t[10],
          status: n[0] ?? 200,
          inputTokens: n[1],
          outputTokens: n[2],
          cachedTokens: n[3],
          cacheWriteTokens: n[4],
          reasoningTokens: n[5],
          costMicros: n[6] ?? 0,
          latencyMs: n[7] ?? 0,
          ttfbMs: n[8],
          requestBytes: n[9],
          responseBytes: n[10],
        }),
      );
    // One batch for every run, emptied each time, as the writer reuses a sent batch's buffer.
    const direct = new CopyRows(16); // grows as it fills
    fc.assert(
      fc.property(
        fc.array(anyRow, { maxLength: 8 }),
        fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
        (rows, keep) => {
          direct.reset();
          for (const r of rows) direct.pushRow(r);
          expect(direct.count).toBe(rows.length);
          expect(direct.times).toEqual(rows.map((r) => r.time));
          // A reused batch writes each row as a fresh one does (a run's kept fields are its own, not the buffer's).
          expect(direct.rows()).toEqual(rows.map(kept));
          expect(direct.copy().subarray(19, -2)).toEqual(CopyRows.ofRows(rows).tuples());
          // A spill file's tuples read back to the same rows and times; a batch some of whose rows expired.
          const again = CopyRows.ofTuples(direct.tuples());
          expect(again.rows()).toEqual(rows.map(kept));
          expect(again.times).toEqual(rows.map((r) => r.time));
          const some = direct.filter(keep);
          expect(some.rows()).toEqual(rows.map(kept).filter((_, i) => keep[i]));
          expect(some.times).toEqual(rows.map((r) => r.time).filter((_, i) => keep[i]));
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('bytes that are not whole tuples are refused, not read as rows', () => {
    const tuples = CopyRows.ofRows([row(1), row(2)]).tuples();
    expect(() => CopyRows.ofTuples(tuples.subarray(0, tuples.length - 3))).toThrow('cut short');
    expect(() => CopyRows.ofTuples(Buffer.from('not tuples at all'))).toThrow('not a request row tuple');
    expect(CopyRows.ofTuples(Buffer.alloc(0)).count).toBe(0);
  });
});
