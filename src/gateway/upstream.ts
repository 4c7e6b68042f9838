import type { ServerResponse } from 'node:http';
import type { Config } from '../config';
import type { ApiError } from '../errors';
import { KeyPool, type PoolHooks, type VendorKey } from './key-pool';
import type { VendorDefinition, VendorName } from './vendor';
import { VENDORS } from './vendors';

/** A vendor bound to this deployment's config: where it is, its key pool, and its error shape. */
export interface Upstream {
  readonly def: VendorDefinition;
  readonly name: VendorName;
  readonly origin: URL;
  /** The origin's path (a vendor behind a path prefix), without a trailing slash. */
  readonly basePath: string;
  /** `origin + basePath`: what absolute URLs the vendor hands out start with. */
  readonly base: string;
  /** Headers filled in when the client sends none, as [lower-case name, value]. */
  readonly defaults: readonly (readonly [string, string])[];
  readonly keyCount: number;
  /** The vendor's keys (and fallback origins): rotation, cooldowns, failover (src/gateway/key-pool.ts). */
  readonly pool: KeyPool;
  /** Next vendor key of the pool (weighted round robin over healthy keys); undefined when none is configured. */
  nextKey(): VendorKey | undefined;
  /** A key's fingerprint: how a remembered object names the key it was created with (never the key itself). */
  fingerprint(key: VendorKey): string;
  /** The pool's key with this fingerprint, if it is still in the pool. */
  keyOf(fingerprint: string): VendorKey | undefined;
  /** Writes one of Genway's own refusals in this vendor's error shape (plain node:http). */
  renderError(res: ServerResponse, err: ApiError, headers: Record<string, string>): void;
}

export function bindUpstream(
  def: VendorDefinition,
  config: Config['gateway'][VendorName],
  failover: Config['gateway']['failover'],
  hooks?: PoolHooks,
): Upstream {
  const origin = new URL(config.baseUrl);
  const basePath = origin.pathname.replace(/\/+$/, '');
  const pool = new KeyPool(def.name, config, failover, hooks);
  return {
    def,
    name: def.name,
    origin,
    basePath,
    base: origin.origin + basePath,
    defaults: Object.entries(def.defaultHeaders?.(config) ?? {}).map(
      ([n, v]) => [n.toLowerCase(), v] as const,
    ),
    keyCount: pool.members.length,
    pool,
    nextKey: () => pool.first(),
    fingerprint: (key) => key.fingerprint,
    keyOf: (fp) => pool.keyOf(fp),
    renderError: (res, err, headers) => {
      const payload = JSON.stringify(def.errorBody(err.status, err.message));
      res.writeHead(err.status, {
        ...headers,
        ...err.headers,
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(payload),
      });
      res.end(payload);
    },
  };
}

export function bindUpstreams(gateway: Config['gateway'], hooks?: PoolHooks): Record<VendorName, Upstream> {
  return Object.fromEntries(
    VENDORS.map((def) => [def.name, bindUpstream(def, gateway[def.name], gateway.failover, hooks)]),
  ) as Record<VendorName, Upstream>;
}
