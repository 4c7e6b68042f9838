import { createHash } from 'node:crypto';
import type { Config } from '../config';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { VendorKeyHealth } from './key-health';
import type { VendorName } from './vendor';

/** A pool's config: a vendor's (`gateway.anthropic`...) or an upstream's base URL, keys and fallbacks. */
export type PoolConfig = Pick<Config['gateway'][VendorName], 'baseUrl' | 'apiKeys' | 'keys' | 'fallbacks'>;
type VendorConfig = PoolConfig;
export type FailoverPolicy = Config['gateway']['failover'];

/** One member of a vendor's pool: a key at an origin (the vendor's own base URL or a fallback). */
export interface VendorKey {
  /** Stable, non-secret name for metrics and logs: the configured id, else `k-` and a sha256 prefix of the key. */
  readonly id: string;
  readonly key: string;
  readonly weight: number;
  readonly origin: URL;
  /** The origin's path (a vendor behind a path prefix), without a trailing slash. */
  readonly basePath: string;
  /** `origin + basePath`. */
  readonly base: string;
  /**
   * How a remembered object names this member (never the key): the key's sha256 prefix at the vendor's base URL (as
   * before pools had fallbacks), base URL and key together at a fallback.
   */
  readonly fingerprint: string;
  readonly index: number;
}

/** What one try on a key came to (the label of `genway_gateway_vendor_key_attempts_total`). */
export type TryOutcome =
  | 'ok'
  | 'client_error'
  /** The vendor answered 401 to Genway's own key: revoked or rotated at the vendor, never the client's doing. */
  | 'key_rejected'
  | 'rate_limited'
  | 'server_error'
  | 'connect_error'
  | 'timeout'
  | 'error';

/** How the pool reports and shares what it sees; all optional (a bare pool just rotates). */
export interface PoolHooks {
  metrics?: Metrics;
  logger?: Logger;
  health?: VendorKeyHealth;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
export const keyFingerprint = (key: string) => sha256(key).slice(0, 24);
const defaultId = (key: string) => `k-${sha256(key).slice(0, 12)}`;

function place(baseUrl: string) {
  const origin = new URL(baseUrl);
  const basePath = origin.pathname.replace(/\/+$/, '');
  return { origin, basePath, base: origin.origin + basePath };
}

/** The pool's members in configured order: the vendor's keys (`apiKeys`, then `keys`), then each fallback's. */
export function poolMembers(config: VendorConfig): VendorKey[] {
  const members: VendorKey[] = [];
  const ids = new Set<string>();
  const add = (
    at: ReturnType<typeof place>,
    key: string,
    id: string,
    weight: number,
    fingerprint: string,
  ) => {
    let unique = id;
    for (let n = 2; ids.has(unique); n++) unique = `${id}-${n}`;
    ids.add(unique);
    members.push({ ...at, id: unique, key, weight, fingerprint, index: members.length });
  };
  const primary = place(config.baseUrl);
  const own = [
    ...config.apiKeys.map((key) => ({ key, id: undefined, weight: undefined })),
    ...(config.keys ?? []),
  ];
  for (const k of own) add(primary, k.key, k.id ?? defaultId(k.key), k.weight ?? 1, keyFingerprint(k.key));
  (config.fallbacks ?? []).forEach((f, i) => {
    const at = place(f.baseUrl);
    const suffix = `@fallback${i + 1}`;
    const keys =
      f.apiKeys || f.keys
        ? [...(f.apiKeys ?? []).map((key) => ({ key, id: undefined, weight: undefined })), ...(f.keys ?? [])]
        : own.map((k) => ({ key: k.key, id: (k.id ?? defaultId(k.key)) + suffix, weight: undefined }));
    for (const k of keys) {
      const fingerprint = keyFingerprint(`${at.base}\n${k.key}`);
      add(at, k.key, k.id ?? defaultId(k.key) + suffix, k.weight ?? f.weight ?? 0, fingerprint);
    }
  });
  return members;
}

const NONE: readonly VendorKey[] = [];

/**
 * A vendor's keys: which one a request goes up with, and which are resting.
 *
 * Rotation is smooth weighted round robin (nginx's) over the weighted keys not in cooldown, so the shares are exact
 * and the order deterministic; keys of weight 0 (by default a fallback's) are used only when no weighted key can be,
 * in configured order. A key cools after a 429 (for its retry-after, else `cooldownMs`), a connect error (every key
 * of that origin) or `failuresToCooldown` consecutive 5xx answers. When every key cools, the one whose cooldown ends
 * first is used all the same: the client then gets the vendor's own answer rather than one Genway makes up.
 *
 * Nothing here waits on the store: a cooldown is applied here at once and written to the store behind the request;
 * `watchKeyHealth` brings in the other replicas' cooldowns in the background.
 */
export class KeyPool {
  readonly members: readonly VendorKey[];
  private readonly current: number[];
  /** Epoch ms a member cools until; 0 = not cooling. */
  private readonly coolUntil: number[];
  private readonly failures: number[];
  /** Members whose `coolUntil` is set (some may have ended: cleared on the next pick). */
  private cooling = 0;
  private readonly byFingerprint: Map<string, VendorKey>;
  private readonly byId: Map<string, VendorKey>;
  private readonly tries: Map<string, { inc(): void }>[];

  constructor(
    readonly vendor: string,
    config: VendorConfig,
    readonly policy: FailoverPolicy,
    private readonly hooks: PoolHooks = {},
  ) {
    this.members = poolMembers(config);
    const n = this.members.length;
    this.current = new Array<number>(n).fill(0);
    this.coolUntil = new Array<number>(n).fill(0);
    this.failures = new Array<number>(n).fill(0);
    this.tries = this.members.map(() => new Map());
    this.byFingerprint = new Map(this.members.map((m) => [m.fingerprint, m]));
    this.byId = new Map(this.members.map((m) => [m.id, m]));
  }

  /** The member with this fingerprint, if it is still configured. */
  keyOf(fingerprint: string): VendorKey | undefined {
    return this.byFingerprint.get(fingerprint);
  }

  /** The key a new request goes up with; undefined when the pool is empty. */
  first(): VendorKey | undefined {
    const n = this.members.length;
    if (n === 0) return undefined;
    if (this.cooling === 0) return n === 1 ? this.members[0] : this.pick(0, NONE, undefined);
    const now = Date.now();
    this.sweep(now);
    return this.pick(now, NONE, undefined) ?? this.soonest();
  }

  /**
   * The key of the next try, which starts at `at` (epoch ms): a weighted key the request has not tried and that is
   * not cooling by then, else such a standby key. Never a key tried already: a pool of one behaves as without
   * failover, and the SDK's own retries do the rest. `origin` keeps the request on one origin (routes whose answers
   * name the vendor's own URLs). Undefined when no key is left.
   */
  next(tried: readonly VendorKey[], at: number, origin?: string): VendorKey | undefined {
    this.sweep(Date.now());
    return this.pick(at, tried, origin);
  }

  /**
   * Records what a try on `key` came to (metrics, breaker, cooldown). For a failure worth another key, returns the
   * wait before the next try; undefined otherwise.
   */
  settle(
    key: VendorKey,
    outcome: TryOutcome,
    detail: { requestId: string; tryNo: number; status?: number; code?: string; retryAfterMs?: number },
  ): number | undefined {
    this.count(key, outcome);
    const { policy } = this;
    const i = key.index;
    if (outcome === 'ok' || outcome === 'client_error') {
      this.failures[i] = 0;
      return undefined;
    }
    const failures = ++this.failures[i];
    const { retryAfterMs } = detail;
    this.hooks.logger?.warn(
      {
        vendor: this.vendor,
        keyId: key.id,
        outcome,
        status: detail.status,
        code: detail.code,
        requestId: detail.requestId,
      },
      'vendor key try failed',
    );
    const now = Date.now();
    if (outcome === 'key_rejected') {
      // A key the vendor no longer takes stays out for a cooldown, and the next key goes at once.
      this.coolDown(key, now + policy.cooldownMs, outcome);
      return 0;
    }
    if (outcome === 'connect_error') {
      for (const m of this.members) {
        if (m.origin.origin === key.origin.origin) this.coolDown(m, now + policy.cooldownMs, outcome);
      }
    } else if (retryAfterMs !== undefined && (outcome === 'rate_limited' || outcome === 'server_error')) {
      this.coolDown(key, now + retryAfterMs, outcome);
    } else if (outcome === 'rate_limited' || failures >= policy.failuresToCooldown) {
      this.coolDown(key, now + policy.cooldownMs, outcome);
    }
    if (outcome === 'timeout' || outcome === 'error') return undefined; // the vendor may be working on it
    if (retryAfterMs !== undefined && retryAfterMs > policy.maxBackoffMs) return 0; // that key rests; the next goes now
    return Math.max(this.backoff(detail.tryNo), retryAfterMs ?? 0);
  }

  /** Takes in a cooldown another replica recorded. */
  adopt(keyId: string, until: number): void {
    const key = this.byId.get(keyId);
    if (key && until > this.coolUntil[key.index]) this.setCooling(key.index, until);
  }

  /** Sets each key's cooldown gauge from this replica's view. */
  report(now: number): void {
    const gauge = this.hooks.metrics?.gatewayVendorKeyCooldown;
    if (!gauge) return;
    this.sweep(now);
    for (const m of this.members) {
      const left = this.coolUntil[m.index] - now;
      gauge.set({ vendor: this.vendor, key_id: m.id }, left > 0 ? left / 1000 : 0);
    }
  }

  /** Wait after a request's `tryNo`-th try: exponential from `backoffMs`, capped, with jitter (half of it random). */
  private backoff(tryNo: number): number {
    const { backoffMs, maxBackoffMs } = this.policy;
    const full = Math.min(maxBackoffMs, backoffMs * 2 ** Math.min(tryNo - 1, 20));
    return Math.round(full / 2 + (Math.random() * full) / 2);
  }

  private coolDown(key: VendorKey, until: number, reason: TryOutcome): void {
    if (until <= this.coolUntil[key.index] || until <= Date.now()) return;
    this.setCooling(key.index, until);
    this.failures[key.index] = 0;
    const cooldownMs = until - Date.now();
    this.hooks.logger?.warn(
      { vendor: this.vendor, keyId: key.id, reason, cooldownMs },
      'vendor key cooling down',
    );
    this.hooks.metrics?.gatewayVendorKeyCooldown.set(
      { vendor: this.vendor, key_id: key.id },
      cooldownMs / 1000,
    );
    this.hooks.health?.coolDown({ vendor: this.vendor, keyId: key.id, until }).catch((err: unknown) => {
      this.hooks.logger?.error(
        { err, vendor: this.vendor, keyId: key.id },
        'sharing a vendor key cooldown failed',
      );
    });
  }

  private setCooling(i: number, until: number): void {
    if (this.coolUntil[i] === 0) this.cooling++;
    this.coolUntil[i] = until;
  }

  private sweep(now: number): void {
    if (this.cooling === 0) return;
    for (let i = 0; i < this.coolUntil.length; i++) {
      const until = this.coolUntil[i];
      if (until !== 0 && until <= now) {
        this.coolUntil[i] = 0;
        this.cooling--;
      }
    }
  }

  private pick(at: number, tried: readonly VendorKey[], origin: string | undefined): VendorKey | undefined {
    const { members, current, coolUntil } = this;
    const usable = (m: VendorKey) => coolUntil[m.index] <= at && (!origin || m.origin.origin === origin);
    let best = -1;
    let total = 0;
    for (let i = 0; i < members.length; i++) {
      const m = members[i];
      if (m.weight === 0 || !usable(m) || tried.includes(m)) continue;
      current[i] += m.weight;
      total += m.weight;
      if (best === -1 || current[i] > current[best]) best = i;
    }
    if (best !== -1) {
      current[best] -= total;
      return members[best];
    }
    for (const m of members) if (m.weight === 0 && usable(m) && !tried.includes(m)) return m;
    return undefined;
  }

  /** Every key cools: the one that is back first. */
  private soonest(): VendorKey {
    let best = this.members[0];
    for (const m of this.members) if (this.coolUntil[m.index] < this.coolUntil[best.index]) best = m;
    return best;
  }

  private count(key: VendorKey, outcome: TryOutcome): void {
    const counter = this.hooks.metrics?.gatewayVendorKeyAttempts;
    if (!counter) return;
    const bound = this.tries[key.index];
    let child = bound.get(outcome);
    if (!child) bound.set(outcome, (child = counter.child({ vendor: this.vendor, key_id: key.id, outcome })));
    child.inc();
  }
}

/**
 * Keeps each replica's view of the cooldowns current without a store round trip per request: every `refreshMs` it
 * reads the cooldowns all replicas recorded and takes in those that end later than its own. A replica applies its own
 * failures at once, so another replica's failure reaches it within one interval (plus the store's latency).
 */
export function watchKeyHealth(
  pools: readonly KeyPool[],
  health: VendorKeyHealth,
  refreshMs: number,
  logger?: Logger,
): { close(): void } {
  const byVendor = new Map(pools.map((p) => [p.vendor as string, p]));
  let running = false;
  let failing = false;
  let stopped = false;
  const refresh = async () => {
    if (running || stopped) return;
    running = true;
    try {
      for (const c of await health.cooling()) byVendor.get(c.vendor)?.adopt(c.keyId, c.until);
      failing = false;
    } catch (err) {
      if (!failing && !stopped) logger?.error({ err }, 'reading vendor key cooldowns failed');
      failing = true;
    } finally {
      running = false;
      const now = Date.now();
      for (const p of pools) p.report(now);
    }
  };
  if (!pools.some((p) => p.members.length > 0)) return { close: () => undefined };
  void refresh();
  const timer = setInterval(() => void refresh(), refreshMs);
  timer.unref();
  return {
    close: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
