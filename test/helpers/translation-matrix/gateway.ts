/**
 * The translation matrix's Genway: a real gateway (startGateway) whose upstreams are FormatMocks of the three target
 * formats, each named by a route (`to-chat`, `to-messages`, `to-generate`) priced in `gateway.prices`, and what a case
 * needs to check what Genway metered and charged against what the mock reported.
 */
import http from 'node:http';
import type { ModelUsage } from '../../../src/gateway/store';
import { FormatMock, type Seen } from '../format-mocks';
import { freePort, startGateway, type RunningGateway } from '../gateway';
import { ADMIN_TOKEN, chargedMicros, fundedKey } from '../services';
import { TARGET_FORMATS, type TargetFormat } from './cases';

export const ROUTE: Record<TargetFormat, string> = {
  chat: 'to-chat',
  messages: 'to-messages',
  generate: 'to-generate',
};
/** The model each route's target names upstream. */
export const TARGET_MODEL = 'target-model';
/** Every route's price: micro-USD per token, so a call's charge is an exact integer. */
export const PRICE = { inputPerMTokUsd: 3, cacheReadPerMTokUsd: 1, outputPerMTokUsd: 15 };
/** The upstreams' keys: what the mocks must see, never a Genway key. */
export const UPSTREAM_KEYS: Record<TargetFormat, string> = {
  chat: 'sk-chat-upstream',
  messages: 'sk-ant-upstream',
  generate: 'AIza-generate-upstream',
};

export interface MatrixKey {
  key: string;
  keyId: string;
  accountId: string;
}

export interface MatrixGateway {
  gw: RunningGateway;
  mocks: Record<TargetFormat, FormatMock>;
  /** A fresh account and key (each case meters on its own). */
  key(options?: { models?: string[] }): Promise<MatrixKey>;
  /** Where each mock's record stands now: `since(mark)` gives what came after. */
  mark(): Record<TargetFormat, number>;
  since(target: TargetFormat, mark: Record<TargetFormat, number>): Seen[];
  /**
   * Checks that Genway metered, under the route's name, exactly the usage the mock reported for `seen` (its answers
   * whole or streamed to their end), read as the target's format is read, and charged exactly its price.
   */
  expectMetered(key: MatrixKey, target: TargetFormat, seen: Seen[]): Promise<void>;
  /** Checks that Genway metered exactly `expected` for the key, and charged exactly its price. */
  expectUsage(key: MatrixKey, expected: Record<string, ModelUsage>): Promise<void>;
  /** Genway's metered usage for the key, once flushed. */
  metered(key: MatrixKey): Promise<Record<string, ModelUsage>>;
  /** Sets a daily budget on the key (admin API). */
  budget(key: MatrixKey, limitUsd: number): Promise<void>;
}

/**
 * Starts the mocks and Genway for a describe block (memory store, or Redis), stopped after it. Genway's own vendors
 * point at a port nothing listens on: every call of the matrix must go by a route.
 */
export function useMatrixGateway(redis: boolean): MatrixGateway {
  const ctx = { mocks: {} } as MatrixGateway;
  beforeAll(async () => {
    for (const f of TARGET_FORMATS) ctx.mocks[f] = await new FormatMock(f).start();
    const { chat, messages, generate } = ctx.mocks;
    ctx.gw = await startGateway(`http://127.0.0.1:${await freePort()}`, {
      redis,
      gateway: {
        upstreams: [
          // A chat completions server without Responses (vLLM's kind): a Responses call is translated for it.
          {
            id: 'chat-up',
            type: 'openai',
            baseUrl: chat.url,
            apiKeys: [UPSTREAM_KEYS.chat],
            speaks: ['chat'],
          },
          { id: 'messages-up', type: 'anthropic', baseUrl: messages.url, apiKeys: [UPSTREAM_KEYS.messages] },
          { id: 'generate-up', type: 'gemini', baseUrl: generate.url, apiKeys: [UPSTREAM_KEYS.generate] },
        ],
        routes: TARGET_FORMATS.map((f) => ({
          model: ROUTE[f],
          targets: [{ upstream: `${f}-up`, model: TARGET_MODEL }],
        })),
        prices: Object.fromEntries(TARGET_FORMATS.map((f) => [ROUTE[f], PRICE])),
      },
    });
  });
  afterAll(async () => {
    await ctx.gw?.close();
    for (const m of Object.values(ctx.mocks)) await m?.stop();
  });

  ctx.key = async (options = {}) => {
    const { key, keyId, accountId } = await fundedKey(ctx.gw.h.services, 10, options);
    return { key, keyId, accountId };
  };
  ctx.mark = () =>
    Object.fromEntries(TARGET_FORMATS.map((f) => [f, ctx.mocks[f].received.length])) as Record<
      TargetFormat,
      number
    >;
  ctx.since = (target, mark) => ctx.mocks[target].received.slice(mark[target]);
  ctx.metered = async (key) => {
    await ctx.gw.h.services.gateway.flushUsage();
    return ctx.gw.h.services.store.usage.get(key.keyId);
  };
  ctx.expectUsage = async (key, expected) => {
    // Usage lands just after the response ends: flushed and read until it is there (a few ms), or the last reading.
    let got = await ctx.metered(key);
    for (let i = 0; i < 50 && JSON.stringify(got) !== JSON.stringify(expected); i++) {
      await new Promise((r) => setTimeout(r, 20));
      got = await ctx.metered(key);
    }
    expect(got).toEqual(expected);
    const charged = (await chargedMicros(ctx.gw.h.services, key.accountId)()).reduce((a, b) => a + b, 0);
    expect(charged).toBe(Object.values(expected).reduce((sum, u) => sum + priceOfUsage(u), 0));
  };
  ctx.expectMetered = async (key, target, seen) => {
    expect(seen.length).toBeGreaterThan(0);
    for (const s of seen) expectUpstreamKey(target, s, key.key);
    await ctx.expectUsage(key, meteredOf(target, seen));
  };
  ctx.budget = async (key, limitUsd) => {
    const res = await fetch(`${ctx.gw.base}/admin/v1/keys/${key.keyId}/budget`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ period: 'day', limitUsd }),
    });
    expect(res.status).toBe(200);
  };
  return ctx;
}

type Reported = NonNullable<Seen['usage']>;

/** A reported usage as Genway's reader of the target's format reads it (docs/translation.md, "Usage"). */
function read(target: TargetFormat, u: Reported) {
  // The messages format counts thinking inside output_tokens, with no count of its own that Genway reads.
  const reasoning = target === 'messages' ? 0 : u.reasoning;
  return {
    input: u.input - u.cacheRead - u.cacheWrite,
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    output: u.output - reasoning,
    reasoning,
  };
}

/** What Genway must have metered for these requests, under the route's name (nothing when none reported usage). */
export function meteredOf(
  target: TargetFormat,
  seen: Seen[],
  route = ROUTE[target],
): Record<string, ModelUsage> {
  const reported = seen.flatMap((s) => (s.usage && s.reported ? [read(target, s.usage)] : []));
  if (!reported.length) return {};
  const sum = { requests: reported.length, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, reasoning: 0 };
  for (const r of reported) {
    sum.input += r.input;
    sum.output += r.output;
    sum.cacheRead += r.cacheRead;
    sum.cacheWrite += r.cacheWrite;
    sum.reasoning += r.reasoning;
  }
  return { [route]: sum };
}

/** Micro-USD of metered usage at PRICE (reasoning at the output price): integers, so the sum of calls is exact. */
function priceOfUsage(u: ModelUsage): number {
  return (
    u.input * PRICE.inputPerMTokUsd +
    u.cacheRead * PRICE.cacheReadPerMTokUsd +
    u.cacheWrite * PRICE.inputPerMTokUsd * 1.25 +
    (u.output + u.reasoning) * PRICE.outputPerMTokUsd
  );
}

/** The upstream's key, never the caller's Genway key, went up. */
function expectUpstreamKey(target: TargetFormat, seen: Seen, genwayKey: string): void {
  const header = { chat: 'authorization', messages: 'x-api-key', generate: 'x-goog-api-key' }[target];
  const want = target === 'chat' ? `Bearer ${UPSTREAM_KEYS.chat}` : UPSTREAM_KEYS[target];
  expect(seen.headers[header]).toBe(want);
  expect(JSON.stringify(seen.headers) + seen.url + seen.body.toString()).not.toContain(genwayKey);
}

/**
 * A streamed call the client leaves once `enough` matches what it received: resolves with what it had. The request
 * goes as raw HTTP (an SDK's abort would wait on its own machinery), in the caller's format.
 */
export function leaveMidStream(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  enough: RegExp,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${String(enough)} within 5 s`)), 5000);
    const req = http.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString();
        if (enough.test(text)) {
          clearTimeout(timer);
          req.destroy();
          resolve(text);
        }
      });
      res.on('end', () => reject(new Error(`the stream ended before ${String(enough)}: ${text}`)));
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify(body));
  });
}

/**
 * What Genway meters for a stream that stopped before its end (the client left, or the upstream broke off): the usage
 * its events had carried so far. A messages stream's `message_start` carries the input (and an output of 1), a
 * generateContent stream's every chunk the prompt's count; a chat completions stream reports nothing before its end,
 * so nothing is metered (docs/decisions.md: estimating it from the text would bill guesses), as on a passthrough call.
 */
export function partialOf(target: TargetFormat, seen: Seen[]): Record<string, ModelUsage> {
  if (target === 'chat') return {};
  const u = seen[seen.length - 1]!.usage!;
  return {
    [ROUTE[target]]: {
      requests: 1,
      input: u.input - u.cacheRead,
      output: target === 'messages' ? 1 : 0,
      cacheRead: u.cacheRead,
      cacheWrite: 0,
      reasoning: 0,
    },
  };
}

/** Waits (bounded) until the mock saw its stream's connection closed before its end. */
export async function cutOff(seen: Seen): Promise<boolean> {
  for (let i = 0; i < 100 && !seen.cut; i++) await new Promise((r) => setTimeout(r, 20));
  return seen.cut === true;
}
